/**
 * An existing Fastify 5 app with routes of its own, and Tollgate mounted under `/rpc` on the same
 * port: JSON-RPC over HTTP at `/rpc/eth/v3/<API_KEY>`, over WebSocket at `/rpc/eth/ws/v3/<API_KEY>`.
 */
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import Fastify from 'fastify';
import { createGateway, type Gateway } from 'tollgate';
import { httpTransport } from 'tollgate/plugins/http';
import { wsTransport } from 'tollgate/plugins/ws';
import { evmFamily } from 'tollgate/plugins/evm';
import { devnet } from '@tollgate/devnet';

const PORT = Number(process.env.PORT ?? 3000);
const HOST = process.env.HOST ?? '127.0.0.1';
const API_KEY = process.env.TOLLGATE_API_KEY ?? 'embed-demo-key-0001';

let gateway: Gateway;
try {
  gateway = await createGateway({
    config: {
      log: { level: 'warn' },
      keys: [{ key: API_KEY, id: 'demo', plan: 'developer' }],
      // One EVM network on an Anvil chain that the devnet plugin starts (and stops) with the gateway.
      networks: [{ name: 'eth', families: ['evm'], upstreams: [{ embedded: 'anvil' }] }],
    },
    plugins: [httpTransport(), wsTransport(), evmFamily(), devnet()],
  });
} catch (error) {
  console.error(`Tollgate did not start: ${(error as Error).message}`);
  process.exit(1);
}

const tollgate = gateway.mount({ prefix: '/rpc' });
const networks = gateway.networks.all.map((network) => network.name);

// forceCloseConnections: on close, once Tollgate has drained (preClose below), the connections still
// open are ended instead of waiting out their keep-alive.
const app = Fastify({ forceCloseConnections: true });

// onRequest runs before Fastify reads the body, so Tollgate gets the raw request whole. Tollgate
// decides at once whether a request is its own: either it has called next() by the time listener()
// returns (the request goes on through Fastify: its routes, its 404), or it answers the request,
// and hijack() tells Fastify to keep its hands off the reply.
app.addHook('onRequest', (request, reply, done) => {
  let handedBack = false;
  tollgate.listener(request.raw, reply.raw, () => {
    handedBack = true;
    done();
  });
  if (!handedBack) reply.hijack();
});

app.get('/', async (_request, reply) => {
  return reply.type('text/html; charset=utf-8').send(`<!doctype html><title>Embedded Tollgate</title><h1>A Fastify app with Tollgate at /rpc</h1>
<p>JSON-RPC: <code>POST /rpc/eth/v3/&lt;API_KEY&gt;</code>, WebSocket: <code>/rpc/eth/ws/v3/&lt;API_KEY&gt;</code></p>\n`);
});
app.get('/health', async () => ({ ok: true }));
app.get('/api/networks', async () => ({ networks }));
// A route of the host's own that takes a JSON body, parsed by Fastify.
app.post('/api/echo', async (request) => ({ received: request.body }));

// WebSocket upgrades under /rpc are Tollgate's; this app has no WebSocket of its own, so any other
// upgrade is answered 404 (after 'upgrade' the socket has no error listener: add one).
function refuseUpgrade(socket: Duplex): void {
  socket.on('error', () => socket.destroy());
  socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
}
app.server.on('upgrade', (req, socket, head) => {
  if (!tollgate.upgrade(req, socket, head)) refuseUpgrade(socket);
});

// fastify.close() first answers new requests 503, then runs preClose hooks, then closes the server.
// Tollgate drains here: its calls in flight are answered, its WebSockets (which would keep the
// server from closing) are closed with 1001 once their calls are answered, and Anvil stops.
app.addHook('preClose', async () => {
  await gateway.close();
});

try {
  await app.listen({ port: PORT, host: HOST });
} catch (error) {
  console.error(`Cannot listen on ${HOST}:${PORT}: ${(error as Error).message}`);
  await gateway.close(); // stops the Anvil child
  process.exit(1);
}
const { port } = app.server.address() as AddressInfo;
console.log(`Listening on http://${HOST}:${port}`);

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) {
    console.error(`${signal} again: exiting without waiting`);
    process.exit(1);
  }
  stopping = true;
  console.log(`${signal}: shutting down`);
  await app.close();
  console.log('Stopped');
  process.exit(0);
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    shutdown(signal).catch((error: unknown) => {
      console.error(`Shutdown failed: ${(error as Error).message}`);
      process.exit(1);
    });
  });
}
