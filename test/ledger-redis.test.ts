import t from 'tap';
import { Agent, request } from 'undici';
import { ConfigError, type GatewayConfigInput } from '../core/index.js';
import { utcDay } from '../core/store-api.js';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { createRedisStore, ledgerRedis, type RedisStore } from '../plugins/ledger-redis/index.js';
import { ManualClock, startTestGateway } from './helpers/gateway.js';
import { post, rpc } from './helpers/json-rpc.js';
import { startTinyUpstream } from './helpers/tiny-upstream.js';
import { startGatewayProcess } from './helpers/gateway-process.js';
import { redisAvailable, startRedisServer } from './helpers/redis-server.js';
import { until } from './faults/helpers.js';

if (!(await redisAvailable())) {
  t.fail('redis-server is not installed (apt-get install redis-server); the Redis ledger tests need it');
  process.exit(1);
}

const COST = 80; // eth_blockNumber
const N = 20;
const redis = await startRedisServer();
t.teardown(() => redis.stop());
const upstream = await startTinyUpstream();
t.teardown(() => upstream.close());
const agent = new Agent({ connections: 256 });
t.teardown(() => agent.close());

/** A store in the test process, to read what the gateways wrote. */
async function openStore(prefix: string): Promise<RedisStore> {
  const store = createRedisStore({ url: redis.url, prefix });
  await store.open();
  return store;
}

/** Fires all calls at once and counts answers by HTTP status. */
async function burst(urls: readonly string[], count: number): Promise<Map<number, number>> {
  const body = JSON.stringify(rpc('eth_blockNumber', []));
  const statuses = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const res = await request(urls[i % urls.length]!, { method: 'POST', body, headers: { 'content-type': 'application/json' }, dispatcher: agent });
      const text = await res.body.text();
      return res.statusCode === 200 && !text.includes('"result"') ? -1 : res.statusCode;
    }),
  );
  const counts = new Map<number, number>();
  for (const status of statuses) counts.set(status, (counts.get(status) ?? 0) + 1);
  return counts;
}


t.test('two gateway processes sharing one Redis spend a balance and a throughput bucket exactly', async (t) => {
  const clockMs = Date.UTC(2026, 10, 22, 12);
  const day = utcDay(new Date(clockMs));
  const prefix = 'exact:';
  const config: GatewayConfigInput = {
    plans: {
      exact: { dailyCredits: N * COST, creditsPerSecond: 1e9, failover: false },
      rate: { dailyCredits: 1e12, creditsPerSecond: N * COST, failover: false },
    },
    keys: [
      { key: 'redis-exact-key-0001', id: 'exact', plan: 'exact' },
      { key: 'redis-rate-key-00001', id: 'rate', plan: 'rate' },
    ],
    networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url, connections: 256 }] }],
    plugins: { 'ledger-redis': { url: redis.url, prefix, usageFlushMs: 20 } },
  };
  const [a, b] = await Promise.all([
    startGatewayProcess({ store: 'redis', config, clockMs }),
    startGatewayProcess({ store: 'redis', config, clockMs }),
  ]);
  t.teardown(() => Promise.all([a.kill(), b.kill()]));
  const store = await openStore(prefix);
  t.teardown(() => store.close());

  const exact = await burst([`${a.origin}/eth/v3/redis-exact-key-0001`, `${b.origin}/eth/v3/redis-exact-key-0001`], 10 * N);
  t.same(Object.fromEntries(exact), { 200: N, 402: 9 * N }, `exactly ${N} of ${10 * N} calls answered, the rest refused for the balance`);
  t.equal((await store.ledger.balance('exact', N * COST, new Date(clockMs))).used, N * COST, 'the shared balance is spent exactly');
  const usage = await until(() => store.usage.usage('exact', day), (u) => u.eth_blockNumber?.calls === 10 * N, 'usage of both gateways');
  t.same(usage, { eth_blockNumber: { calls: 10 * N, credits: N * COST, bytes: usage.eth_blockNumber!.bytes, failed: 9 * N } }, 'recorded usage is N x cost');

  const urls = [`${a.origin}/eth/v3/redis-rate-key-00001`, `${b.origin}/eth/v3/redis-rate-key-00001`];
  const first = await burst(urls, 10 * N);
  t.same(Object.fromEntries(first), { 200: N, 429: 9 * N }, `the first second lets exactly ${N} through across both processes`);
  await Promise.all([a.advance(500), b.advance(500)]);
  const half = await burst(urls, 10 * N);
  t.same(Object.fromEntries(half), { 200: N / 2, 429: 10 * N - N / 2 }, 'half a second later, half a second of credits');
  await Promise.all([a.advance(5000), b.advance(5000)]);
  const later = await burst(urls, 10 * N);
  t.same(Object.fromEntries(later), { 200: N, 429: 9 * N }, 'after a long pause, one full burst and no more');
  t.equal((await store.ledger.balance('rate', 1e12, new Date(clockMs))).used, 2.5 * N * COST, 'only the calls let through were charged');
  t.equal(await a.stop(), 0);
  t.equal(await b.stop(), 0);
});

t.test('day keys roll over at 00:00 UTC by the injected clock and expire by themselves', async (t) => {
  const clock = new ManualClock(Date.UTC(2026, 10, 22, 23, 59, 59, 500));
  const prefix = 'day:';
  const gw = await startTestGateway(
    {
      plans: { tiny: { dailyCredits: 2 * COST, creditsPerSecond: 1e6, failover: false } },
      keys: [{ key: 'redis-day-key-000001', id: 'day', plan: 'tiny' }],
      networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url }] }],
    },
    [ledgerRedis({ url: redis.url, prefix, retainDays: 2 }), httpTransport(), evmFamily()],
    { clock },
  );
  t.teardown(() => gw.close());
  const url = gw.url('eth', 'redis-day-key-000001');
  t.equal((await post(url, rpc('eth_blockNumber', []))).status, 200);
  t.equal((await post(url, rpc('eth_blockNumber', []))).status, 200);
  const refused = await post(url, rpc('eth_blockNumber', []));
  t.equal(refused.status, 402);
  t.equal((refused.json as { error: { data: { resetsAt: string } } }).error.data.resetsAt, '2026-11-23T00:00:00.000Z');
  clock.advance(500);
  t.equal((await post(url, rpc('eth_blockNumber', []))).status, 200, 'the new UTC day has its whole balance');
  const store = await openStore(prefix);
  t.teardown(() => store.close());
  const ttl = await store.connection.client.pttl(`${prefix}bal:2026-11-22:{day}`);
  t.ok(ttl > 2 * 86_400_000 - 60_000 && ttl <= 2 * 86_400_000 + 1000, `the day's balance key expires about retainDays after the day ended (${ttl} ms)`);
  t.ok((await store.connection.client.pttl(`${prefix}bal:2026-11-23:{day}`)) > 2 * 86_400_000, 'and so does the new one');
});

t.test('Redis killed and restarted mid-load: the refuse policy serves nothing uncharged, then recovers', async (t) => {
  const prefix = 'refuse:';
  const gw = await startTestGateway(
    {
      plans: { big: { dailyCredits: 1e12, creditsPerSecond: 1e9, failover: false } },
      keys: [{ key: 'redis-refuse-key-001', id: 'refuse', plan: 'big' }],
      networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url }] }],
    },
    [ledgerRedis({ url: redis.url, prefix, whenUnavailable: 'refuse', commandTimeoutMs: 500 }), httpTransport(), evmFamily()],
  );
  t.teardown(() => gw.close());
  const url = gw.url('eth', 'redis-refuse-key-001');
  const outcomes: Array<{ start: number; end: number; status: number; code?: number; retryAfter?: unknown }> = [];
  let stop = false;
  const worker = async (): Promise<void> => {
    while (!stop) {
      const start = performance.now();
      const res = await post(url, rpc('eth_blockNumber', []));
      outcomes.push({ start, end: performance.now(), status: res.status, code: (res.json as { error?: { code: number } }).error?.code, retryAfter: res.headers['retry-after'] });
      if (res.status !== 200) await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };
  const load = Promise.all(Array.from({ length: 4 }, worker));
  t.teardown(async () => { stop = true; await load; });
  await until(async () => outcomes.filter((o) => o.status === 200).length, (n) => n >= 20, 'calls before the outage');
  await redis.kill();
  const down = performance.now();
  await until(async () => outcomes.filter((o) => o.start > down).length, (n) => n >= 20, 'calls during the outage');
  const up = performance.now();
  await redis.restart();
  await until(async () => outcomes.filter((o) => o.start > up && o.status === 200).length, (n) => n >= 20, 'calls after Redis is back');
  stop = true;
  await load;

  const during = outcomes.filter((o) => o.start > down && o.end < up);
  t.ok(during.length >= 20, `${during.length} calls during the outage`);
  t.same(during.filter((o) => o.status !== 503 || o.code !== -33507 || o.retryAfter !== '1'), [], 'each was refused with METERING_UNAVAILABLE and Retry-After');
  t.same(outcomes.filter((o) => o.status !== 200 && o.status !== 503), [], 'no other answer at any time');
  const store = await openStore(prefix);
  t.teardown(() => store.close());
  const servedAfter = outcomes.filter((o) => o.start > up && o.status === 200).length;
  const used = (await store.ledger.balance('refuse', 1e12, new Date())).used;
  t.ok(used >= servedAfter * COST, `every call served after the restart is charged in the new Redis (${used / COST} >= ${servedAfter})`);
});

t.test('Redis killed and restarted mid-load: the allowance policy serves a bounded allowance and writes it back', async (t) => {
  const prefix = 'allowance:';
  const gw = await startTestGateway(
    {
      plans: { big: { dailyCredits: 1e12, creditsPerSecond: 1e9, failover: false } },
      keys: [{ key: 'redis-allow-key-0001', id: 'allow', plan: 'big' }],
      networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url }] }],
    },
    [ledgerRedis({ url: redis.url, prefix, whenUnavailable: 'allowance', localAllowance: 5 * COST, commandTimeoutMs: 500 }), httpTransport(), evmFamily()],
  );
  t.teardown(() => gw.close());
  const url = gw.url('eth', 'redis-allow-key-0001');
  t.equal((await post(url, rpc('eth_blockNumber', []))).status, 200, 'served while Redis is up');
  await redis.kill();
  const during: number[] = [];
  for (let i = 0; i < 8; i++) during.push((await post(url, rpc('eth_blockNumber', []))).status);
  t.same(during, [200, 200, 200, 200, 200, 503, 503, 503], 'five calls fit the local allowance, then METERING_UNAVAILABLE');
  await redis.restart();
  await until(async () => (await post(url, rpc('eth_blockNumber', []))).status, (s) => s === 200, 'Redis to be used again');
  const store = await openStore(prefix);
  t.teardown(() => store.close());
  await until(async () => (await store.ledger.balance('allow', 1e12, new Date())).used, (used) => used >= 6 * COST, 'the allowance to be written back');
  t.equal((await store.ledger.balance('allow', 1e12, new Date())).used, 6 * COST, 'the five local debits and the call after the restart, once each');
});

t.test('a gateway whose Redis cannot be reached does not start, and says where without the password', async (t) => {
  const dead = await startRedisServer();
  await dead.stop();
  const started = startTestGateway(
    { networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url }] }], plugins: { 'ledger-redis': { url: `redis://:redis-password-123@127.0.0.1:${dead.port}`, connectTimeoutMs: 100, startTimeoutMs: 300 } } },
    [ledgerRedis(), httpTransport(), evmFamily()],
  );
  const error = await started.then(() => undefined, (e: unknown) => e as Error);
  t.equal(error?.name, 'PluginError');
  t.equal(error?.message, `ledger-redis: cannot reach Redis at 127.0.0.1:${dead.port} within startTimeoutMs (300 ms)`);
  const bad = await startTestGateway(
    { networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url }] }], plugins: { 'ledger-redis': { url: redis.url, whenUnavailable: 'pray' } } },
    [ledgerRedis(), httpTransport(), evmFamily()],
  ).then(() => undefined, (e: unknown) => e as ConfigError);
  t.type(bad, ConfigError);
  t.same(bad?.problems, ['plugins.ledger-redis.whenUnavailable: must be one of refuse, allowance']);
});

t.test('a catch-up asked for while one runs gets a run of its own after it, so a clean stop writes the last usage', async (t) => {
  const store = await openStore('catch-up:');
  t.teardown(() => store.close());
  let runs = 0;
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  // Registered after the ledger's and the usage recorder's hooks: the first run holds here.
  store.connection.onReady(async () => {
    runs++;
    if (runs === 1) await gate;
  });
  void store.connection.catchUp();
  await until(() => runs, (n) => n === 1, 'the first run to reach the held hook');
  // Recorded while the first run is past the usage recorder: only a later run can write it.
  const at = Date.now();
  store.usage.record({ keyId: 'late', network: 'eth', method: 'eth_chainId', at, calls: 1, credits: 5, bytes: 0, failed: false });
  let settled = false;
  const asked = store.connection.catchUp().then(() => (settled = true));
  const alsoAsked = store.connection.catchUp();
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(settled, false, 'it waits for the run in progress');
  release();
  await Promise.all([asked, alsoAsked]);
  t.equal(runs, 2, 'one more run serves both callers');
  t.same((await store.usage.usage('late', utcDay(new Date(at)))).eth_chainId, { calls: 1, credits: 5, bytes: 0, failed: 0 }, 'the usage recorded during the first run is written');
});

t.test('a clean stop while Redis reconnects waits for it, and writes the usage recorded during the outage', async (t) => {
  const store = createRedisStore({ url: redis.url, prefix: 'stop-while-reconnecting:', connectTimeoutMs: 60_000 });
  await store.open();
  await redis.kill();
  await until(() => store.connection.ready, (ready) => !ready, 'the store to see Redis gone');
  const at = Date.now();
  store.usage.record({ keyId: 'outage', network: 'eth', method: 'eth_chainId', at, calls: 3, credits: 0, bytes: 0, failed: true });
  // The stop begins while Redis is down: it cannot finish until Redis is back.
  let stopped = false;
  const stopping = store.close().then(() => (stopped = true));
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(stopped, false, 'the stop waits while Redis is down');
  await redis.restart();
  await stopping;
  t.equal(stopped, true, 'the stop ends once Redis is back');
  const reader = await openStore('stop-while-reconnecting:');
  t.teardown(() => reader.close());
  t.same((await reader.usage.usage('outage', utcDay(new Date(at)))).eth_chainId, { calls: 3, credits: 0, bytes: 0, failed: 3 }, 'the outage\'s usage was written at the stop');
});
