import 'reflect-metadata';
import t from 'tap';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGateway, type Gateway } from '../core/index.js';
import { normalizePrefix, urlUnderPrefix } from '../core/gateway/mount.js';
import { httpTransport } from '../plugins/http/index.js';
import { wsTransport } from '../plugins/ws/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { post, rpc } from './helpers/json-rpc.js';
import { openWs } from './helpers/ws-client.js';
import { until } from './helpers/until.js';

const KEY = 'mount-test-key-0001';

t.test('prefixes: what is inside a mount and what the gateway then sees', async (t) => {
  t.equal(normalizePrefix(undefined), '');
  t.equal(normalizePrefix('/'), '');
  t.equal(normalizePrefix('rpc/'), '/rpc');
  t.equal(normalizePrefix('/a/b//'), '/a/b');
  t.equal(urlUnderPrefix('/rpc/eth/v3/K', '/rpc'), '/eth/v3/K');
  t.equal(urlUnderPrefix('/rpc', '/rpc'), '/');
  t.equal(urlUnderPrefix('/rpc?x=1', '/rpc'), '/?x=1');
  t.equal(urlUnderPrefix('/rpcx/eth/v3/K', '/rpc'), undefined);
  t.equal(urlUnderPrefix('/other', '/rpc'), undefined);
  t.equal(urlUnderPrefix('/eth/v3/K', ''), '/eth/v3/K');
});

// A node that answers eth_chainId after `delayMs`, so a call can be in flight while the gateway closes.
/** A node that answers `eth_chainId`-style calls with `0x539`; with `hold`, it keeps every answer until `release()`. */
async function slowNode(options: { hold?: boolean } = {}): Promise<{ url: string; received(): number; release(): void; close(): Promise<void> }> {
  let received = 0;
  let held: Array<() => void> | undefined = options.hold === true ? [] : undefined;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received++;
      const call = JSON.parse(Buffer.concat(chunks).toString()) as { id: number };
      const answer = (): void => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: call.id, result: '0x539' }));
      };
      if (held === undefined) answer();
      else held.push(answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received: () => received,
    release: () => {
      const waiting = held ?? [];
      held = undefined;
      for (const answer of waiting) answer();
    },
    close: () => new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); }),
  };
}

interface Host {
  readonly gateway: Gateway;
  readonly server: Server;
  readonly origin: string;
  readonly seenByHost: string[];
}

// An existing server with routes of its own, Tollgate mounted at /rpc.
async function startHost(upstreamUrl: string): Promise<Host> {
  const gateway = await createGateway({
    config: {
      log: { level: 'silent' },
      keys: [{ key: KEY, id: 'mount', plan: 'growth' }],
      networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: upstreamUrl }] }],
      upstreamDefaults: { timeoutMs: 10_000 },
    },
    plugins: [httpTransport(), wsTransport(), evmFamily()],
  });
  const tollgate = gateway.mount({ prefix: '/rpc' });
  const seenByHost: string[] = [];
  const own = (req: IncomingMessage, res: ServerResponse): void => {
    seenByHost.push(req.url ?? '');
    if (req.url === '/health') return void res.end('ok');
    res.writeHead(404, { 'content-type': 'text/plain' }).end('host: not found');
  };
  const server = createServer((req, res) => tollgate.listener(req, res, () => own(req, res)));
  server.on('upgrade', (req, socket, head) => {
    if (!tollgate.upgrade(req, socket, head)) socket.end('HTTP/1.1 418 I am a teapot\r\nContent-Length: 0\r\n\r\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { gateway, server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seenByHost };
}

t.test('a gateway mounted under a prefix shares a server with its own routes', async (t) => {
  const node = await slowNode();
  const host = await startHost(node.url);
  t.teardown(async () => {
    await host.gateway.close();
    await new Promise<void>((resolve) => { host.server.close(() => resolve()); host.server.closeAllConnections(); });
    await node.close();
  });

  const call = await post(`${host.origin}/rpc/eth/v3/${KEY}`, rpc('eth_chainId'));
  t.equal(call.status, 200);
  t.same(call.json, { jsonrpc: '2.0', id: 1, result: '0x539' });

  const health = await fetch(`${host.origin}/health`);
  t.equal(await health.text(), 'ok', "the host's own route still answers");

  for (const path of ['/eth/v3/' + KEY, '/rpcx/eth/v3/' + KEY, '/rpc/nowhere/v3/' + KEY, '/rpc/eth/v2/' + KEY]) {
    const res = await fetch(`${host.origin}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    t.equal(res.status, 404, `${path} is not the gateway's`);
    t.equal(await res.text(), 'host: not found', `${path} reaches the host's handler`);
  }
  t.same(host.seenByHost.slice(-4), ['/eth/v3/' + KEY, '/rpcx/eth/v3/' + KEY, '/rpc/nowhere/v3/' + KEY, '/rpc/eth/v2/' + KEY], 'the host sees the URL as the client sent it');

  const ws = await openWs(`ws${host.origin.slice(4)}/rpc/eth/ws/v3/${KEY}`);
  ws.send(rpc('eth_chainId', [], 7));
  t.same((await ws.waitFor(1))[0], { jsonrpc: '2.0', id: 7, result: '0x539' }, 'WebSocket under the prefix');
  ws.close();
  await ws.closed;

  await t.rejects(openWs(`ws${host.origin.slice(4)}/eth/ws/v3/${KEY}`), /HTTP 418/, 'an upgrade outside the prefix is left to the host');
  await t.rejects(openWs(`ws${host.origin.slice(4)}/rpc/eth/ws/v3/not-a-key`), /HTTP 401/, 'a bad key under the prefix is refused by the gateway');
});

t.test('without next, a mounted listener answers what it does not serve with a JSON-RPC 404', async (t) => {
  const node = await slowNode();
  const gateway = await createGateway({
    config: { log: { level: 'silent' }, keys: [{ key: KEY, plan: 'growth' }], networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: node.url }] }] },
    plugins: [httpTransport(), evmFamily()],
  });
  const server = createServer(gateway.mount({ prefix: '/rpc' }).listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(async () => {
    await gateway.close();
    await new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); });
    await node.close();
  });
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const outside = await post(`${origin}/eth/v3/${KEY}`, rpc('eth_chainId'));
  t.equal(outside.status, 404);
  t.same(outside.json, { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Not found' } });
  const inside = await post(`${origin}/rpc/eth/v3/${KEY}`, rpc('eth_chainId'));
  t.same(inside.json, { jsonrpc: '2.0', id: 1, result: '0x539' });
});

t.test('closing the gateway waits for calls in flight and refuses new ones', async (t) => {
  const node = await slowNode({ hold: true });
  const host = await startHost(node.url);
  t.teardown(async () => {
    await new Promise<void>((resolve) => { host.server.close(() => resolve()); host.server.closeAllConnections(); });
    await node.close();
  });
  const url = `${host.origin}/rpc/eth/v3/${KEY}`;
  const inFlight = post(url, rpc('eth_chainId'));
  await until('the call to reach the node', () => node.received() === 1);
  let closed = false;
  const closing = host.gateway.close().then(() => (closed = true));
  const late = await post(url, rpc('eth_chainId'));
  t.equal(late.status, 503, 'a call arriving during shutdown is refused');
  t.equal((late.json as { error: { code: number } }).error.code, -33503);
  t.equal(node.received(), 1, 'the refused call never reached the node');
  t.notOk(closed, 'close() is still waiting for the call in flight');
  node.release();
  const answered = await inFlight;
  t.equal(answered.status, 200);
  t.same(answered.json, { jsonrpc: '2.0', id: 1, result: '0x539' }, 'the call in flight was answered, not cut off');
  await closing;
  t.ok(closed);
});
