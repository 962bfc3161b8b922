/**
 * Redis faults under load on two gateway instances sharing one Redis: a stall (SIGSTOP) longer than the
 * command timeout, and a crash (SIGKILL) followed by a restart from the append-only file. After each, the
 * key's charged credits equal the calls whose result reached the client, and its usage counts every call
 * made, once.
 */
import t, { type Test } from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { utcDay } from '../../core/store-api.js';
import { type GatewayConfigInput } from '../../core/index.js';
import { pino } from 'pino';
import { register } from 'prom-client';
import { createRedisStore } from '../../plugins/ledger-redis/index.js';
import { exportConnectionMetrics } from '../../plugins/ledger-redis/connection-metrics.js';
import { startGatewayProcess, type GatewayProcess } from '../helpers/gateway-process.js';
import { redisAvailable, startRedisServer } from '../helpers/redis-server.js';
import { startTinyUpstream } from '../helpers/tiny-upstream.js';
import { httpLoad, report, startFailingUpstream, until } from './helpers.js';

if (!(await redisAvailable())) {
  t.fail('redis-server is not installed (apt-get install redis-server); the Redis fault tests need it');
  process.exit(1);
}

const COST = 80; // eth_blockNumber
const COMMAND_TIMEOUT_MS = 200;
const KEY = 'redis-fault-key-0001';
const dir = mkdtempSync(join(tmpdir(), 'tollgate-redis-faults-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
// Every write on disk before it is answered, so a restart after SIGKILL keeps what was charged.
const redis = await startRedisServer(['--appendonly', 'yes', '--appendfsync', 'always', '--dir', dir]);
t.teardown(() => redis.stop());
const upstream = await startTinyUpstream();
t.teardown(() => upstream.close());
// Calls to this node are charged, fail after a while, and are refunded: refunds in flight when Redis stalls.
const failing = await startFailingUpstream(100);
t.teardown(() => failing.close());

function config(prefix: string): GatewayConfigInput {
  return {
    plans: { big: { dailyCredits: 1e12, creditsPerSecond: 1e12, failover: false } },
    keys: [{ key: KEY, id: 'fault', plan: 'big' }],
    networks: [
      { name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url, connections: 64 }] },
      { name: 'flaky', families: ['evm'], upstreams: [{ url: failing.url, connections: 64 }] },
    ],
    plugins: { 'ledger-redis': { url: redis.url, prefix, whenUnavailable: 'refuse', commandTimeoutMs: COMMAND_TIMEOUT_MS, usageFlushMs: 20 } },
  };
}

async function twoGateways(prefix: string): Promise<[GatewayProcess, GatewayProcess]> {
  return Promise.all([startGatewayProcess({ store: 'redis', config: config(prefix) }), startGatewayProcess({ store: 'redis', config: config(prefix) })]);
}

/** Runs load on both instances through `fault`, stops the instances cleanly, and checks the key's books. */
async function underLoad(t: Test, name: string, prefix: string, fault: (load: ReturnType<typeof httpLoad>) => Promise<void>): Promise<void> {
  const [a, b] = await twoGateways(prefix);
  t.teardown(() => Promise.all([a.kill(), b.kill()]));
  const load = httpLoad([a, b].flatMap((g) => [`${g.origin}/eth/v3/${KEY}`, `${g.origin}/eth/v3/${KEY}`, `${g.origin}/flaky/v3/${KEY}`]), 3);
  await until(() => load.tally.delivered, (n) => n >= 100, 'calls before the fault');
  await fault(load);
  const delivered = load.tally.delivered;
  await until(() => load.tally.delivered, (n) => n >= delivered + 100, 'calls after the fault');
  const tally = await load.stop();
  // A clean stop writes whatever waited for Redis (refunds, cancellations, usage).
  t.equal(await a.stop(), 0, 'instance A stops cleanly');
  t.equal(await b.stop(), 0, 'instance B stops cleanly');

  const store = createRedisStore({ url: redis.url, prefix });
  await store.open();
  t.teardown(() => store.close());
  const now = new Date();
  const charged = (await store.ledger.balance('fault', 1e12, now)).used / COST;
  const usage = (await store.usage.usage('fault', utcDay(now))).eth_blockNumber;
  report(name, { charged, delivered: tally.delivered, calls: tally.answered, usageCalls: usage?.calls ?? 0, usageCredits: (usage?.credits ?? 0) / COST, statuses: JSON.stringify(Object.fromEntries(tally.statuses)) });
  t.equal(tally.transportErrors, 0, 'every call got an HTTP answer');
  t.equal(charged, tally.delivered, 'credits charged = calls whose result reached the client');
  t.equal(usage?.calls, tally.answered, 'usage counts every call made, once');
  t.equal(usage?.credits, tally.delivered * COST, 'usage credits = credits charged');
}

t.test(`Redis stalled (SIGSTOP) longer than the ${COMMAND_TIMEOUT_MS} ms command timeout under load on two instances`, async (t) => {
  await underLoad(t, 'redis SIGSTOP', 'stall:', async (load) => {
    const refusedBefore = load.tally.statuses.get(503) ?? 0;
    const stalledAt = Date.now();
    redis.pause();
    // Stalled until both instances timed out on it several times over (each refused call waited a timeout).
    await until(() => ({ refused: (load.tally.statuses.get(503) ?? 0) - refusedBefore, ms: Date.now() - stalledAt }), (s) => s.refused >= 30 && s.ms >= 5 * COMMAND_TIMEOUT_MS, 'calls refused during the stall');
    redis.resume();
  });
});

t.test('Redis killed (SIGKILL) and restarted from its append-only file under load on two instances', async (t) => {
  await underLoad(t, 'redis SIGKILL + restart', 'crash:', async (load) => {
    const refusedBefore = load.tally.statuses.get(503) ?? 0;
    await redis.kill();
    await until(() => (load.tally.statuses.get(503) ?? 0) - refusedBefore, (n) => n >= 30, 'calls refused while Redis is down');
    await redis.restart();
  });
});

t.test('each outage (a stall, then a crash) is logged once when it starts and once when it ends, with its duration, and counted in metrics', async (t) => {
  const lines: Array<{ msg: string; downMs?: number; upMs?: number }> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as { msg: string }) });
  const store = createRedisStore({ url: redis.url, prefix: 'transitions:', commandTimeoutMs: COMMAND_TIMEOUT_MS }, logger);
  exportConnectionMetrics(store.connection);
  await store.open();
  t.teardown(() => store.close());
  let stop = false;
  // Metered traffic, paced so a refused debit does not spin.
  const traffic = (async () => {
    while (!stop) {
      try {
        await store.ledger.debit('k', 1, 1e9, new Date());
      } catch { /* refused while Redis is down */ }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  t.teardown(async () => { stop = true; await traffic; });
  const count = (msg: string): number => lines.filter((l) => l.msg === msg).length;

  redis.pause();
  await until(() => count('Redis unreachable'), (n) => n >= 1, 'the stall to be noticed');
  redis.resume();
  await until(() => count('Redis reachable again'), (n) => n >= 1, 'the end of the stall to be noticed');
  await redis.kill();
  await until(() => count('Redis unreachable'), (n) => n >= 2, 'the crash to be noticed');
  await redis.restart();
  await until(() => count('Redis reachable again'), (n) => n >= 2, 'the restart to be noticed');
  stop = true;
  await traffic;

  t.equal(count('Redis unreachable'), 2, 'two outages, each logged once as it started');
  t.equal(count('Redis reachable again'), 2, 'and once as it ended');
  const ends = lines.filter((l) => l.msg === 'Redis reachable again');
  t.ok(ends.every((l) => typeof l.downMs === 'number' && l.downMs > 0), `each end carries the outage's duration (${ends.map((l) => l.downMs).join(', ')} ms)`);
  const metrics = await register.getSingleMetricAsString('tollgate_store_transitions_total');
  const address = store.connection.address;
  t.match(metrics, `tollgate_store_transitions_total{store="redis",address="${address}",state="down"} 2`, 'transitions counted as a metric');
  t.match(await register.getSingleMetricAsString('tollgate_store_up'), `tollgate_store_up{store="redis",address="${address}"} 1`, 'up again');
  report('redis outages logged', { down: count('Redis unreachable'), up: count('Redis reachable again'), downMs: ends.map((l) => l.downMs).join('/') });
});
