/**
 * An existing Express 5 app with routes of its own, and Tollgate mounted under `/rpc` on the same
 * port: JSON-RPC over HTTP at `/rpc/eth/v3/<API_KEY>`, over WebSocket at `/rpc/eth/ws/v3/<API_KEY>`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import express from 'express';
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

// One mount serves both HTTP (as middleware) and WebSocket upgrades (which Express never sees), so
// the prefix is written once. What Tollgate does not serve goes on to the next middleware.
const tollgate = gateway.mount({ prefix: '/rpc' });
const networks = gateway.networks.all.map((network) => network.name);

const app = express();
app.disable('x-powered-by');
// Before any body parser: express.json() would read the body of a JSON-RPC call before Tollgate could.
app.use(tollgate.listener);
app.use(express.json());

app.get('/', (_req, res) => {
  res.type('html').send(`<!doctype html><title>Embedded Tollgate</title><h1>An Express app with Tollgate at /rpc</h1>
<p>JSON-RPC: <code>POST /rpc/eth/v3/&lt;API_KEY&gt;</code>, WebSocket: <code>/rpc/eth/ws/v3/&lt;API_KEY&gt;</code></p>\n`);
});
app.get('/health', (_req, res) => {
  res.json({ ok: true });
});
app.get('/api/networks', (_req, res) => {
  res.json({ networks });
});
// A route of the host's own that takes a JSON body, parsed by express.json().
app.post('/api/echo', (req, res) => {
  res.json({ received: req.body as unknown });
});
app.use((req, res) => {
  res.status(404).json({ error: 'not found', path: req.path });
});

const server = createServer(app);

// WebSocket upgrades under /rpc are Tollgate's; this app has no WebSocket of its own, so any other
// upgrade is answered 404 (after 'upgrade' the socket has no error listener: add one).
function refuseUpgrade(socket: Duplex): void {
  socket.on('error', () => socket.destroy());
  socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
}
server.on('upgrade', (req, socket, head) => {
  if (!tollgate.upgrade(req, socket, head)) refuseUpgrade(socket);
});

try {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(PORT, HOST, () => { server.off('error', reject); resolve(); });
  });
} catch (error) {
  console.error(`Cannot listen on ${HOST}:${PORT}: ${(error as Error).message}`);
  await gateway.close(); // stops the Anvil child
  process.exit(1);
}
const { port } = server.address() as AddressInfo;
console.log(`Listening on http://${HOST}:${port}`);

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) {
    console.error(`${signal} again: exiting without waiting`);
    process.exit(1);
  }
  stopping = true;
  console.log(`${signal}: shutting down`);
  // Stop accepting connections; open keep-alive connections are still answered while Tollgate drains.
  const serverClosed = new Promise<void>((resolve) => server.close(() => resolve()));
  // Tollgate answers its calls in flight (new ones get 503), closes WebSockets with 1001, stops Anvil.
  await gateway.close();
  // Whatever connection is still open (idle keep-alive, a client mid-request to a host route) ends now.
  server.closeAllConnections();
  await serverClosed;
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
