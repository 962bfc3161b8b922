/**
 * Far fewer Redis round trips: a key's combined takes of two event-loop turns go to Redis as one script.
 * Calls are charged exactly as one by one (never beyond the balance, with two processes), Redis runs far
 * fewer commands than there are calls (INFO commandstats: a constant number per script, whatever the
 * calls in it; calls that arrive while the key's script is in Redis share the next one), a batch sent
 * again changes nothing, and the
 * crash window (kill -9 under load) is what docs/operations.md states: credits of calls in flight.
 */
import t from 'tap';
import { Agent, request } from 'undici';
import type { GatewayConfigInput } from '../core/index.js';
import type { RedisStore } from '../plugins/ledger-redis/index.js';
import { openRedisStore, scriptsRun } from './helpers/redis-store.js';
import { startTinyUpstream } from './helpers/tiny-upstream.js';
import { startGatewayProcess } from './helpers/gateway-process.js';
import { redisAvailable, startRedisServer } from './helpers/redis-server.js';
import { rpc } from './helpers/json-rpc.js';
import { until } from './helpers/until.js';
import { inCheckPhase } from './helpers/turns.js';

if (!(await redisAvailable())) {
  t.fail('redis-server is not installed (apt-get install redis-server)');
  process.exit(1);
}

const COST = 80; // eth_blockNumber
const redis = await startRedisServer();
t.teardown(() => redis.stop());
const upstream = await startTinyUpstream();
t.teardown(() => upstream.close());
const agent = new Agent({ connections: 512 });
t.teardown(() => agent.close());
const BODY = JSON.stringify(rpc('eth_blockNumber', []));

const openStore = (prefix: string): Promise<RedisStore> => openRedisStore(redis.url, prefix);

/** One call; 1 when it carried a result, else the HTTP status. */
async function call(url: string): Promise<number> {
  const res = await request(url, { method: 'POST', body: BODY, headers: { 'content-type': 'application/json' }, dispatcher: agent });
  const text = await res.body.text();
  return res.statusCode === 200 && text.includes('"result"') ? 1 : res.statusCode;
}

function config(prefix: string, dailyCredits: number, usageFlushMs = 50): GatewayConfigInput {
  return {
    plans: { metered: { dailyCredits, creditsPerSecond: 1e9, failover: false }, open: { dailyCredits: 1e12, creditsPerSecond: 1e9, failover: false } },
    keys: [
      { key: 'redis-batch-key-0001', id: 'batch', plan: 'metered' },
      { key: 'redis-batch-warm-0001', id: 'warm', plan: 'open' },
    ],
    networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url, connections: 256 }] }],
    plugins: { 'ledger-redis': { url: redis.url, prefix, usageFlushMs } },
  };
}

t.test('two processes, 400 calls at once for 150 calls of credits: exactly 150 answered and charged, in far fewer scripts than calls', async (t) => {
  const prefix = 'batch:';
  // Usage is written when the processes stop (a long flush interval), so the count below is the calls'
  // own scripts and does not grow with how long a busy machine takes to send the 400 calls.
  const settings = config(prefix, 150 * COST, 60_000);
  const [a, b] = await Promise.all([startGatewayProcess({ store: 'redis', config: settings }), startGatewayProcess({ store: 'redis', config: settings })]);
  t.teardown(() => Promise.all([a.kill(), b.kill()]));
  const store = await openStore(prefix);
  t.teardown(() => store.close());
  const urls = [a.origin, b.origin].map((origin) => `${origin}/eth/v3/redis-batch-key-0001`);
  // 400 calls of another key first open the client's connections, so the 400 below are written at
  // once on open sockets, as a busy dapp's are, instead of each waiting for its own TCP handshake.
  const warm = [a.origin, b.origin].map((origin) => `${origin}/eth/v3/redis-batch-warm-0001`);
  t.same(new Set(await Promise.all(Array.from({ length: 400 }, (_, i) => call(warm[i % 2]!)))), new Set([1]), 'the warm-up calls were answered');
  // One call each first, so both know the key's limit and combine its bucket and debit from then on.
  t.same(await Promise.all(urls.map(call)), [1, 1]);
  const before = await scriptsRun(store);
  const outcomes = await Promise.all(Array.from({ length: 400 }, (_, i) => call(urls[i % 2]!)));
  const scripts = (await scriptsRun(store)) - before;
  const answered = outcomes.filter((o) => o === 1).length;
  t.equal(answered, 148, 'exactly the balance left was answered');
  t.same(outcomes.filter((o) => o !== 1 && o !== 402), [], 'the rest were refused for the balance');
  t.equal((await store.ledger.balance('batch', 150 * COST, new Date())).used, 150 * COST, 'charged = answered, never beyond the balance');
  t.ok(scripts < 400 / 2, `${scripts} scripts for 400 calls (${(scripts / 400).toFixed(3)} per call)`);
  t.comment(`Redis scripts per call: ${(scripts / 400).toFixed(3)}`);
  t.equal(await a.stop(), 0);
  t.equal(await b.stop(), 0);
});

t.test('a batch sent again answers the same and changes nothing; cancelling it gives back what it took', async (t) => {
  const store = await openStore('resend:');
  t.teardown(() => store.close());
  const client = store.connection.client;
  const names = store.connection.names;
  const bucket = names.bucket('k');
  const balance = names.balance('2026-05-01', 'k');
  const marker = names.markerBeside(balance, 'b1');
  const paid = names.paid('k');
  const now = Date.UTC(2026, 4, 1, 12);
  // Bucket of 200 credits; a daily limit of 250: 80 and 80 fit, the third 80 is beyond the bucket.
  const first = await client.tgTakeDebitBatch(bucket, balance, marker, paid, 100, 200, now, 250, 86_400_000, 60_000, 80, 80, 80);
  t.same(first, [1, 0, 1, 80, 0, 0, 1, 0, 1, 160, 0, 0, 0, 400, 0, 160, 0, 0], 'two taken, the third waits 400 ms for the 40 tokens the bucket lacks');
  t.same(await client.tgTakeDebitBatch(bucket, balance, marker, paid, 100, 200, now, 250, 86_400_000, 60_000, 80, 80, 80), first, 'sent again: the same answer');
  t.equal(await client.get(balance), '160', 'and nothing taken twice');
  await client.tgRefund(balance, marker, paid, 240, 0, 60_000, 0);
  t.equal(await client.get(balance), '0', 'cancelled: exactly the 160 it took are given back');
  t.same(
    await client.tgTakeDebitBatch(bucket, balance, names.markerBeside(balance, 'b2'), paid, 100, 200, now + 2000, 100, 86_400_000, 60_000, 80, 80),
    [1, 0, 1, 80, 0, 0, 1, 0, 0, 80, 0, 0],
    'a batch past the daily limit: the first call taken, the second let through the bucket but refused for the balance',
  );
  const late = names.markerBeside(balance, 'b3');
  await client.tgRefund(balance, late, paid, 80, 0, 60_000, 0);
  t.same(await client.tgTakeDebitBatch(bucket, balance, late, paid, 100, 200, now, 1000, 86_400_000, 60_000, 80, 80), [-1], 'a batch cancelled before it arrived is a no-op');
});

t.test('kill -9 under load: charged - answered stays within the calls in flight (the crash window)', async (t) => {
  const prefix = 'crash:';
  const gateway = await startGatewayProcess({ store: 'redis', config: config(prefix, 1e12) });
  t.teardown(() => gateway.kill());
  const store = await openStore(prefix);
  t.teardown(() => store.close());
  const url = `${gateway.origin}/eth/v3/redis-batch-key-0001`;
  const CONCURRENCY = 32;
  let answered = 0;
  let stopped = false;
  const worker = async (): Promise<void> => {
    while (!stopped) {
      try {
        if ((await call(url)) === 1) answered++;
      } catch {
        return; // the gateway is gone: this call was in flight
      }
    }
  };
  const load = Promise.all(Array.from({ length: CONCURRENCY }, worker));
  await until('calls answered before the kill', () => answered >= 500, 60_000);
  await gateway.kill();
  stopped = true;
  await load;
  const charged = (await store.ledger.balance('batch', 1e12, new Date())).used / COST;
  t.comment(`answered ${answered}, charged ${charged}: ${charged - answered} charged but not answered`);
  t.ok(charged >= answered, 'every answered call was charged before it was served');
  t.ok(charged - answered <= CONCURRENCY, `at most the ${CONCURRENCY} calls in flight were charged without an answer (${charged - answered})`);
});

/** Every command Redis has run so far (INFO commandstats, script bodies included), INFO itself left out. */
async function commandsRun(store: RedisStore): Promise<{ commands: number; scripts: number }> {
  const stats = await store.connection.client.info('commandstats');
  let commands = 0;
  let scripts = 0;
  for (const [, name, calls] of stats.matchAll(/^cmdstat_([a-z|_-]+):calls=(\d+)/gm)) {
    if (name === 'info') continue;
    commands += Number(calls);
    if (name === 'eval' || name === 'evalsha') scripts += Number(calls);
  }
  return { commands, scripts };
}

t.test('100 charges of one key in one turn cost a constant number of Redis commands, each call with its own outcome', async (t) => {
  const store = await openStore('constant:');
  t.teardown(() => store.close());
  const now = Date.now();
  // A bucket of 5000 credits (5000 a second) and a day of 4000: of 100 calls of 100 credits, the first 40
  // are taken, the next 10 pass the bucket but not the balance, the last 50 find the bucket empty.
  t.ok((await store.metering.charge('warm', 1, { creditsPerSecond: 5000, dailyCredits: 4000 }, now)).ok, 'a first charge loads the script');
  const open = { creditsPerSecond: 5000, dailyCredits: 4000 };
  const start = await commandsRun(store);
  const outcomes = await Promise.all(Array.from({ length: 100 }, () => store.metering.charge('j', 100, open, now)));
  const end = await commandsRun(store);
  t.same(
    outcomes.map((c) => (c.ok ? 'ok' : c.code)),
    [...Array<string>(40).fill('ok'), ...Array<string>(10).fill('CREDITS_EXHAUSTED'), ...Array<string>(50).fill('RATE_LIMITED')],
    'each call charged as alone, in order: 40 taken, 10 beyond the day, 50 beyond the bucket',
  );
  t.equal((await store.ledger.balance('j', 4000, new Date(now))).used, 4000, 'exactly the 40 calls taken are charged');
  t.equal(end.scripts - start.scripts, 1, 'one script');
  // evalsha, MGET (marker, day, paid, bucket), SET of the bucket, SET of the day, SET of the marker: 5,
  // whatever the number of calls.
  t.equal(end.commands - start.commands, 5, '5 commands for 100 calls in all');
});

t.test('the calls of a key of two turns share a script; those that arrive once it is in Redis share the next', async (t) => {
  const store = await openStore('waiting:');
  t.teardown(() => store.close());
  const now = Date.now();
  const limits = { creditsPerSecond: 1e9, dailyCredits: 1e9 };
  t.ok((await store.metering.charge('k', 1, limits, now)).ok, 'a first charge loads the script');
  type Charges = Array<ReturnType<typeof store.metering.charge>>;
  const charge50 = (): Charges => Array.from({ length: 50 }, () => store.metering.charge('k', 1, limits, now));

  const start = await commandsRun(store);
  // 50 now and 50 in this turn's check phase: the batch is still open, one script for the 100.
  const twoTurns = await Promise.all([...charge50(), ...(await inCheckPhase(1, charge50))]);
  const afterTwoTurns = await commandsRun(store);
  t.equal(twoTurns.filter((c) => c.ok).length, 100, 'all charged');
  t.equal(afterTwoTurns.scripts - start.scripts, 1, 'one script for the calls of two turns');
  t.equal(afterTwoTurns.commands - start.commands, 5, '5 commands for 100 calls');

  // The script of the first 100 is written in the next turn's check phase, before the third 50 of that
  // phase are asked for: they wait for its answer (it cannot be read before the next poll phase) and go
  // as the second script.
  const waited = await Promise.all([...charge50(), ...(await Promise.all([inCheckPhase(1, charge50), inCheckPhase(2, charge50)])).flat()]);
  const end = await commandsRun(store);
  t.equal(waited.filter((c) => c.ok).length, 150, 'all charged');
  t.equal(end.scripts - afterTwoTurns.scripts, 2, 'two scripts: the two turns\' 100 calls, then the 50 that waited for it');
  t.equal(end.commands - afterTwoTurns.commands, 10, '5 commands a script: 10 for 150 calls');
  t.equal((await store.ledger.balance('k', 1e9, new Date(now))).used, 251, 'each call once');
});
