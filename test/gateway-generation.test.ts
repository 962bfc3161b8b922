import 'reflect-metadata';
import t from 'tap';
import { request as httpRequest, type ClientRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGateway, type GatewayConfigInput } from '../core/index.js';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { startSocketCountingUpstream } from './helpers/socket-counting-upstream.js';
import { post, rpc } from './helpers/json-rpc.js';
import { until } from './helpers/until.js';
import { Drains } from '../core/gateway/drains.js';
import type { Upstream } from '../core/contracts/upstream.js';

// A reload builds a new generation (networks, upstream pools, pipeline) and retires the old one, whose
// pools close once the calls and requests that started on it end. A config-management loop that reloads
// again and again keeps one generation's connections open, not one per reload.
const node = await startSocketCountingUpstream();
t.teardown(() => node.close());

const KEY = 'generation-test-key-0001';
// Two configurations, alternated, so every reload really changes what the upstream pool is built from.
const configs: GatewayConfigInput[] = [1, 2].map((price) => ({
  log: { level: 'silent' },
  server: { host: '127.0.0.1', port: 0 },
  keys: [{ key: KEY, plan: 'free' }],
  plans: { free: { dailyCredits: 1_000_000_000, creditsPerSecond: 1_000_000_000, failover: false } },
  // Idle connections outlive the test: only closing a pool closes them.
  upstreamDefaults: { keepAliveTimeoutMs: 600_000 },
  networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: node.url, name: `node-${price}`, headers: { 'x-generation': String(price) } }] }],
  plugins: { evm: { credits: { eth_chainId: price } } },
}));

const gateway = await createGateway({ config: configs[0]!, plugins: [httpTransport(), evmFamily()] });
t.teardown(() => gateway.close());
const server = await gateway.listen();
const port = (server.address() as AddressInfo).port;
const url = `http://127.0.0.1:${port}/eth/v3/${KEY}`;
const answered = async (id: number): Promise<unknown> => (await post(url, rpc('eth_chainId', [], id))).json;

/** A call whose request reached the gateway (it answered `100 Continue`) and whose body is not sent yet. */
const startWithoutBody = async (id: number): Promise<{ send: () => Promise<unknown> }> => {
  const body = JSON.stringify(rpc('eth_chainId', [], id));
  let req!: ClientRequest;
  const answer = new Promise<unknown>((resolve, reject) => {
    req = httpRequest({ host: '127.0.0.1', port, path: `/eth/v3/${KEY}`, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), expect: '100-continue' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
    });
    req.on('error', reject);
  });
  await new Promise<void>((resolve) => req.once('continue', resolve));
  return { send: () => { req.end(body); return answer; } };
};

t.test('100 reloads leave the connections to the node where they started; calls in flight across reloads are answered', async (t) => {
  t.same(await answered(0), { jsonrpc: '2.0', id: 0, result: '0x2a' });
  await until('the first call\'s connection is counted', () => node.sockets() === 1);
  const start = node.sockets();

  const inFlight: Array<{ id: number; answer: Promise<unknown> }> = [];
  const waitingBodies: Array<{ id: number; send: () => Promise<unknown> }> = [];
  for (let i = 1; i <= 100; i++) {
    // Each generation opens a connection of its own.
    t.same(await answered(i), { jsonrpc: '2.0', id: i, result: '0x2a' });
    if (i % 10 === 0) {
      // A call the node holds across this reload and the next ones.
      node.holdNext();
      inFlight.push({ id: 1000 + i, answer: answered(1000 + i) });
      await until('the node holds the call', () => node.held() === 1);
      // A call that chose its network (and so this generation's upstreams) but has not sent its body yet.
      waitingBodies.push({ id: 2000 + i, ...(await startWithoutBody(2000 + i)) });
    }
    await gateway.reload(configs[i % 2]);
    if (i % 10 === 0) node.release();
  }

  for (const { id, send } of waitingBodies) t.same(await send(), { jsonrpc: '2.0', id, result: '0x2a' }, `the call whose body arrived after its generation was retired is answered (${id})`);
  for (const { id, answer } of inFlight) t.same(await answer, { jsonrpc: '2.0', id, result: '0x2a' }, `the call held across a reload is answered (${id})`);
  t.same(await answered(999), { jsonrpc: '2.0', id: 999, result: '0x2a' }, 'the last generation serves');
  // Every retired generation has closed its pool; only the current one's connection is left.
  await until(`the connections to the node are back to ${start} (${node.sockets()} open)`, () => node.sockets() === start);
  t.equal(node.sockets(), start, 'as many connections to the node as after the first call');
});

t.test('closing the gateway closes the current generation\'s pool and a retired one that still serves a call', async (t) => {
  node.holdNext();
  const held = answered(3000);
  await until('the node holds the call', () => node.held() === 1);
  await gateway.reload(configs[0]);
  t.same(await answered(3001), { jsonrpc: '2.0', id: 3001, result: '0x2a' }, 'the new generation serves while the old one waits for its call');
  t.ok(node.sockets() >= 2, 'the retired generation\'s connection stays open for its call');
  node.release();
  t.same(await held, { jsonrpc: '2.0', id: 3000, result: '0x2a' });
  await gateway.close();
  await until('no connection is left open to the node', () => node.sockets() === 0);
  t.equal(node.sockets(), 0);
});

t.test('a retired generation closes its upstreams once, after the last call on it ends; close() closes the rest', async (t) => {
  const closes: string[] = [];
  const upstream = (name: string): Upstream => ({ name, close: async () => { closes.push(name); } }) as unknown as Upstream;
  const drains = new Drains();
  const old = drains.adopt([], [upstream('old-a'), upstream('old-b')]);
  const current = drains.adopt([], [upstream('current')]);
  old.enter();
  old.enter();
  old.retire();
  t.same(closes, [], 'two calls still run on the retired generation');
  old.leave();
  t.same(closes, [], 'one still does');
  old.leave();
  t.same(closes, ['old-a', 'old-b'], 'the last one out closed its upstreams');
  old.enter();
  old.leave();
  old.retire();
  t.same(closes, ['old-a', 'old-b'], 'and never again');
  t.equal(drains.open, 1, 'only the current generation is left open');
  current.enter();
  await drains.closeAll();
  t.same(closes, ['old-a', 'old-b', 'current'], 'closing the gateway closes the current one, a call in flight or not');
  current.leave();
  t.equal(closes.length, 3);
  t.equal(drains.open, 0);
});
