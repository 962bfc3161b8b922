/**
 * The Redis store's metering port: a call's bucket and debit in one script, through one call, so no
 * store guesses from a bucket's name. A plugin throttling on the key's id takes a bucket and nothing
 * else; a charge is one script (INFO commandstats on a real redis-server), refunds itself once, and the
 * charges of one turn share one script.
 */
import t from 'tap';
import { createHash } from 'node:crypto';
import { keyOf, step, Tokens, type TollgatePlugin } from '../core/plugin-api.js';
import { MeteringToken, type Charge, type Charged } from '../core/store-api.js';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { ledgerRedis, type RedisStore } from '../plugins/ledger-redis/index.js';
import { openRedisStore, scriptsRun } from './helpers/redis-store.js';
import { ManualClock, startTestGateway } from './helpers/gateway.js';
import { post, rpc } from './helpers/json-rpc.js';
import { startTinyUpstream } from './helpers/tiny-upstream.js';
import { redisAvailable, startRedisServer } from './helpers/redis-server.js';
import { DEBIT, REFUND, TAKE, TAKE_DEBIT, TAKE_DEBIT_BATCH } from '../plugins/ledger-redis/scripts.js';

if (!(await redisAvailable())) {
  t.fail('redis-server is not installed (apt-get install redis-server)');
  process.exit(1);
}

const redis = await startRedisServer();
t.teardown(() => redis.stop());
const NOW = Date.UTC(2026, 10, 22, 12);
const DAY = new Date(NOW);
const PLAN = { dailyCredits: 200, creditsPerSecond: 1000 };

const openStore = (prefix: string): Promise<RedisStore> => openRedisStore(redis.url, prefix);

const SCRIPT_NAMES = new Map<string, string>(
  Object.entries({ TAKE, TAKE_DEBIT, TAKE_DEBIT_BATCH, DEBIT, REFUND }).flatMap(([name, lua]) => [[createHash('sha1').update(lua).digest('hex'), name], [lua, name]]),
);

/** The metering scripts `store` sends from now on, by name, in order. */
function scriptsSent(store: RedisStore): string[] {
  const sent: string[] = [];
  const client = store.connection.client;
  const original = client.sendCommand.bind(client);
  client.sendCommand = ((command: { name: string; args: unknown[] }) => {
    const script = command.name === 'evalsha' || command.name === 'eval' ? SCRIPT_NAMES.get(String(command.args[0])) : undefined;
    if (script !== undefined) sent.push(script);
    return original(command as never);
  }) as typeof client.sendCommand;
  return sent;
}

function taken(charge: Charge): Charged {
  if (!charge.ok) throw new Error(`expected a charge, got ${charge.code}`);
  return charge;
}

t.test('a plugin\'s bucket named by the key id is only a bucket: no debit rides on it, nothing to refund', async (t) => {
  const store = await openStore('trap:');
  t.teardown(() => store.close());
  // The key's limit is known to the store (earlier versions learned it from a debit and combined from then on).
  t.match(await store.ledger.debit('k', 80, 200, DAY), { ok: true });
  const sent = scriptsSent(store);
  t.same(await store.limiter.take('k', 20, 1000, 1000, NOW), { ok: true }, 'a plugin throttles on the natural bucket name');
  t.equal((await store.ledger.balance('k', 200, DAY)).used, 80, 'the balance did not move: no debit was taken with the bucket');
  t.same(sent, ['TAKE'], 'the bucket alone, in one script; no combined debit and no refund of it');
});

t.test('the bucket is one string under a name of its own: a plugin\'s throttle and the metering share it; the previous version\'s hash is left alone', async (t) => {
  const store = await openStore('shared:');
  t.teardown(() => store.close());
  const client = store.connection.client;
  const bucket = store.connection.names.bucket('k');
  // The bucket as the previous version keeps it (a hash, another name): an instance of it still running.
  await client.hset('shared:rate:{k}', 't', '5', 'a', String(NOW), 'e', String(NOW));
  t.same(await store.limiter.take('k', 20, 1000, 1000, NOW), { ok: true }, 'a plugin throttles on the key id');
  t.equal(await client.get(bucket), `980|${NOW}`);
  taken(await store.metering.charge('k', 80, PLAN, NOW));
  t.equal(await client.get(bucket), `900|${NOW}`, 'the metering took from the same bucket');
  t.same(await store.limiter.take('k', 901, 1000, 1000, NOW), { ok: false, retryAfterMs: 1 }, 'and the throttle sees what the metering took');
  t.same(await client.hgetall('shared:rate:{k}'), { t: '5', a: String(NOW), e: String(NOW) }, 'the previous version\'s hash is neither read nor written');
});

t.test('a charge is one script: the key\'s bucket and its debit, and its refund gives it back once', async (t) => {
  const store = await openStore('one:');
  t.teardown(() => store.close());
  taken(await store.metering.charge('warm', 1, PLAN, NOW)); // loads the script, so EVALSHA answers at once below
  const sent = scriptsSent(store);
  const before = await scriptsRun(store);
  const charge = taken(await store.metering.charge('k', 80, PLAN, NOW));
  t.equal((await scriptsRun(store)) - before, 1, 'Redis ran one script for the whole charge');
  t.same(sent, ['TAKE_DEBIT']);
  t.match(charge, { receipt: { id: String, keyId: 'k', day: '2026-11-22', credits: 80 }, remaining: 120 });
  t.equal((await store.ledger.balance('k', 200, DAY)).used, 80);
  const bucket = store.connection.names.bucket('k');
  t.equal(await store.connection.client.get(bucket), `920|${NOW}`, 'the key\'s bucket, one string: it gave 80 of its 1000 tokens at NOW');
  t.ok((await store.connection.client.pttl(bucket)) > 0, 'and it expires');

  sent.length = 0;
  await charge.refund();
  await charge.refund();
  t.same(sent, ['REFUND'], 'refunded once, however often asked');
  t.equal((await store.ledger.balance('k', 200, DAY)).used, 0);
  // The receipt still refunds through the ledger (a transport that refunds undelivered answers does): once, by its id.
  await store.ledger.refund({ ...charge.receipt });
  t.equal((await store.ledger.balance('k', 200, DAY)).used, 0);
});

t.test('refusals carry the meter stage\'s codes and spend no credits', async (t) => {
  const store = await openStore('refuse:');
  t.teardown(() => store.close());
  const tight = { dailyCredits: 200, creditsPerSecond: 100 };
  taken(await store.metering.charge('k', 100, tight, NOW));
  t.same(await store.metering.charge('k', 50, tight, NOW), { ok: false, code: 'RATE_LIMITED', retryAfterMs: 500 }, 'the bucket is empty: 50 tokens are half a second away');
  t.same(await store.metering.charge('k', 150, tight, NOW + 2000), { ok: false, code: 'CREDITS_EXHAUSTED', remaining: 100, paidRemaining: 0, resetsAt: new Date('2026-11-23T00:00:00.000Z') });
  t.equal((await store.ledger.balance('k', 200, DAY)).used, 100, 'only the first charge spent credits');
});

t.test('a key charged across midnight debits each day\'s own balance, and a change of plan its own limits', async (t) => {
  // The ledger keeps each key's names and batch group for the day: a new day, or new limits, are new ones.
  const store = await openStore('midnight:');
  t.teardown(() => store.close());
  const beforeMidnight = Date.UTC(2026, 10, 22, 23, 59, 59, 900);
  const afterMidnight = beforeMidnight + 200;
  taken(await store.metering.charge('k', 150, PLAN, beforeMidnight));
  taken(await store.metering.charge('k', 150, PLAN, afterMidnight));
  t.equal((await store.ledger.balance('k', 200, new Date(beforeMidnight))).used, 150, 'the first day keeps its charge');
  t.equal((await store.ledger.balance('k', 200, new Date(afterMidnight))).used, 150, 'the second day has its own: 150 more fit under its 200');
  const refused = await store.metering.charge('k', 100, { ...PLAN, dailyCredits: 240 }, afterMidnight + 10);
  t.same(refused, { ok: false, code: 'CREDITS_EXHAUSTED', remaining: 90, paidRemaining: 0, resetsAt: new Date('2026-11-24T00:00:00.000Z') }, 'a plan of 240 a day: 90 left of it, under the new limit');
  taken(await store.metering.charge('k', 90, { ...PLAN, dailyCredits: 240 }, afterMidnight + 20));
});

t.test('the charges of one key in one turn share one script, each charged as alone', async (t) => {
  const store = await openStore('turn:');
  t.teardown(() => store.close());
  taken(await store.metering.charge('warm', 1, PLAN, NOW));
  const before = await scriptsRun(store);
  const charges = await Promise.all(Array.from({ length: 50 }, () => store.metering.charge('k', 80, { dailyCredits: 800, creditsPerSecond: 1e6 }, NOW)));
  t.equal((await scriptsRun(store)) - before, 1, 'fifty charges, one script');
  t.equal(charges.filter((c) => c.ok).length, 10, 'exactly the ten that fit the balance');
  t.same(new Set(charges.filter((c) => !c.ok).map((c) => c.ok ? '' : c.code)), new Set(['CREDITS_EXHAUSTED']));
  t.equal(new Set(charges.map((c) => (c.ok ? c.receipt.id : undefined)).filter(Boolean)).size, 10, 'each taken charge has its own debit id');
  t.equal((await store.ledger.balance('k', 800, DAY)).used, 800);
});

t.test('a charge without a bucket (events) is the debit alone', async (t) => {
  const store = await openStore('events:');
  t.teardown(() => store.close());
  const sent = scriptsSent(store);
  taken(await store.metering.charge('k', 80, { dailyCredits: 200 }, NOW));
  t.same(sent, ['DEBIT']);
  t.equal(await store.connection.client.exists(store.connection.names.bucket('k')), 0, 'no bucket taken');
});

t.test('through a gateway: a stage throttling on the key id before meter costs a bucket, never a debit or a refund', async (t) => {
  const upstream = await startTinyUpstream();
  t.teardown(() => upstream.close());
  const ledger = ledgerRedis();
  const throttle: TollgatePlugin = {
    name: 'throttle-by-key',
    register(container) {
      container.register(Tokens.Stage, {
        useValue: {
          name: 'throttleByKey',
          after: 'authenticate',
          create: ({ limiter, clock }) => step(async (ctx) => {
            if (!(await limiter.take(keyOf(ctx).id, 1, 1e6, 1e6, clock.now())).ok) throw new Error('throttled');
          }),
        },
      });
    },
  };
  const gw = await startTestGateway(
    {
      plans: { metered: { dailyCredits: 1e6, creditsPerSecond: 1e6, failover: false } },
      keys: [{ key: 'redis-metering-key-0001', id: 'rk', plan: 'metered' }],
      networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url }] }],
      plugins: { 'ledger-redis': { url: redis.url, prefix: 'gw:', usageFlushMs: 60_000 } },
    },
    [ledger, httpTransport(), evmFamily(), throttle],
    { clock: new ManualClock(NOW) },
  );
  t.teardown(() => gw.close());
  t.equal(gw.gateway.container.resolve(MeteringToken), ledger.store.metering, 'the store registered its one-script metering');
  const sent = scriptsSent(ledger.store);
  const url = gw.url('eth', 'redis-metering-key-0001');
  for (let i = 0; i < 3; i++) {
    t.equal((await post(url, rpc('eth_blockNumber', []))).status, 200);
    t.equal((await ledger.store.ledger.balance('rk', 1e6, DAY)).used, 80 * (i + 1), `call ${i + 1}: charged its 80 credits, nothing more`);
  }
  t.same(sent, ['TAKE', 'TAKE_DEBIT', 'TAKE', 'TAKE_DEBIT', 'TAKE', 'TAKE_DEBIT'], 'per call: the plugin\'s bucket, then the charge in one script; no refund');
});
