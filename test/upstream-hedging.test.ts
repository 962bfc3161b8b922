import t from 'tap';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { Tokens } from '../core/plugin-api.js';
import { type CreditLedger } from '../core/store-api.js';
import { type GatewayConfigInput } from '../core/index.js';
import type { FailoverSelector } from '../core/upstream/failover-selector.js';
import { startAnvil, type AnvilInstance } from '@tollgate/devnet';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { upstreamView } from './helpers/failover-upstreams.js';
import { post, rpc } from './helpers/json-rpc.js';

// Two Anvil nodes of one chain; one answers through a proxy that holds every answer 200 ms (a slow node).
const DELAY_MS = 200;
const GENESIS = { args: ['--timestamp', '1700000000'] };
const [fast, slow] = (await Promise.all([startAnvil(GENESIS), startAnvil(GENESIS)])) as [AnvilInstance, AnvilInstance];
t.teardown(() => Promise.all([fast.stop(), slow.stop()]));

/** What the delaying proxy saw: requests in, and those whose caller went away before the answer. */
const proxyCounts = { received: 0, abandoned: 0 };
const slowPool = new Pool(slow.url, { connections: 32 });
const delaying = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    proxyCounts.received++;
    res.on('close', () => { if (!res.writableFinished) proxyCounts.abandoned++; });
    setTimeout(() => {
      slowPool.request({ path: '/', method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) }).then(async (answer) => {
        const bytes = Buffer.from(await answer.body.arrayBuffer());
        if (!res.destroyed) res.writeHead(answer.statusCode, { 'content-type': 'application/json' }).end(bytes);
      }, () => res.destroy());
    }, DELAY_MS);
  });
});
await new Promise<void>((resolve) => delaying.listen(0, '127.0.0.1', resolve));
t.teardown(async () => {
  delaying.closeAllConnections();
  await new Promise<void>((resolve) => delaying.close(() => resolve()));
  await slowPool.close();
});
const slowUrl = `http://127.0.0.1:${(delaying.address() as AddressInfo).port}`;

const KEY = 'hedging-key-000000001';
const CHAIN_ID_CREDITS = 5;
const N = 120;
const config = (hedge: boolean): GatewayConfigInput => ({
  plans: { big: { dailyCredits: 1e12, creditsPerSecond: 1e9, failover: false } },
  keys: [{ key: KEY, id: 'hedge', plan: 'big' }],
  networks: [{ name: 'eth', families: ['evm'], upstreams: [{ name: 'fast', url: fast.url }, { name: 'slow', url: slowUrl }], failover: { hedge: { enabled: hedge } } }],
  upstreamDefaults: { timeoutMs: 5_000, connectTimeoutMs: 1_000 },
  failover: { breaker: { failureThreshold: 3, cooldownMs: 60_000 }, probe: { intervalMs: 500, timeoutMs: 2_000 } },
});
const plain = await startTestGateway(config(false), [httpTransport(), evmFamily()]);
t.teardown(() => plain.close());
const hedged = await startTestGateway(config(true), [httpTransport(), evmFamily()]);
t.teardown(() => hedged.close());

const percentile = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
const used = async (gw: TestGateway): Promise<number> => (await gw.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger).balance('hedge', 1e12, new Date(gw.gateway.clock.now()))).used;

t.test('with one node delayed by 200 ms, hedging cuts p99, charges once and opens no breaker', async (t) => {
  const times = { plain: [] as number[], hedged: [] as number[] };
  const servedBy = { plain: new Map<string, number>(), hedged: new Map<string, number>() };
  const wrong: string[] = [];
  // Side by side in one run: each round trip through one gateway, then the other, so load is alike.
  for (let i = 0; i < N; i++) {
    for (const [name, gw] of [['plain', plain], ['hedged', hedged]] as const) {
      const started = performance.now();
      const answer = await post(gw.url('eth', KEY), rpc('eth_chainId', [], i));
      times[name].push(performance.now() - started);
      if ((answer.json as { result?: string }).result !== '0x7a69') wrong.push(`${name} call ${i}: ${answer.status} ${answer.text}`);
      const by = String(answer.headers['x-tollgate-upstream']);
      servedBy[name].set(by, (servedBy[name].get(by) ?? 0) + 1);
    }
  }
  t.same(wrong, [], 'every call through both gateways was answered with the chain id');
  const figures = Object.fromEntries(Object.entries(times).map(([name, list]) => {
    const sorted = [...list].sort((a, b) => a - b);
    return [name, { p50: Math.round(percentile(sorted, 50) * 10) / 10, p99: Math.round(percentile(sorted, 99) * 10) / 10 }];
  })) as Record<'plain' | 'hedged', { p50: number; p99: number }>;
  t.comment(`eth_chainId through the gateway, ${N} calls each, ms: without hedging p50 ${figures.plain.p50} p99 ${figures.plain.p99}; with hedging p50 ${figures.hedged.p50} p99 ${figures.hedged.p99}`);
  t.comment(`served by: without ${JSON.stringify(Object.fromEntries(servedBy.plain))}, with ${JSON.stringify(Object.fromEntries(servedBy.hedged))}; the slow node's proxy saw ${proxyCounts.received} requests, ${proxyCounts.abandoned} abandoned`);
  t.ok((servedBy.plain.get('slow') ?? 0) > 0, 'without hedging the slow node serves its share');
  t.ok(figures.hedged.p99 < figures.plain.p99, 'p99 drops with hedging');
  t.ok(proxyCounts.abandoned > 0, 'the losing attempts on the slow node were cancelled');

  t.equal(await used(hedged), N * CHAIN_ID_CREDITS, 'each hedged call was charged once');
  t.equal(await used(plain), N * CHAIN_ID_CREDITS);
  const selector = hedged.gateway.container.resolve(Tokens.UpstreamSelector) as FailoverSelector;
  const slowView = upstreamView(selector, 'eth', 'slow');
  t.equal(slowView.breaker.opened, 0, 'no breaker opened');
  t.equal(slowView.breaker.consecutiveFailures, 0, 'cancelled hedges are no failures');
  t.equal(slowView.counters.failures, 0);
});
