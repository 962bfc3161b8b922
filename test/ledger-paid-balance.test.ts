/**
 * The paid balance beside the daily one, in every credit ledger (memory, SQLite, Redis, Redis Cluster):
 * top-ups applied once per id, debits that take the day first and the rest from the paid balance (all
 * or nothing), refunds that put each part back where it came from, concurrent debits that never both
 * spend the last paid credits; and a gateway that serves a key whose day is spent from its paid
 * balance, until that runs out too.
 */
import t, { type Test } from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Tokens } from '../core/plugin-api.js';
import { LimiterLedgerMetering, MemoryCreditLedger, MemoryRateLimiter, type Charge, type Charged, type CreditLedger, type DebitResult, type DebitTaken, type Metering } from '../core/store-api.js';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { admin } from '../plugins/admin/index.js';
import { createRedisStore, ledgerRedis, type RedisStore } from '../plugins/ledger-redis/index.js';
import { ledgerSqlite, openSqliteStore } from '../plugins/ledger-sqlite/index.js';
import { ManualClock, startTestGateway } from './helpers/gateway.js';
import { pino } from 'pino';
import { createEventMeter, createEventRefund } from '../core/metering/event-meter.js';
import type { ApiKeyRecord, Plan } from '../core/contracts/keys.js';
import type { UsageEvent } from '../core/contracts/usage.js';
import { post, rpc } from './helpers/json-rpc.js';
import { startTinyUpstream } from './helpers/tiny-upstream.js';
import { redisAvailable, startRedisServer } from './helpers/redis-server.js';
import { startRedisCluster } from './helpers/redis-cluster.js';
import { adminRequest } from './helpers/admin-request.js';
import { scriptsRun } from './helpers/redis-store.js';

if (!(await redisAvailable())) {
  t.fail('redis-server is not installed (apt-get install redis-server); the paid-balance tests need it');
  process.exit(1);
}

const NOW = new Date(Date.UTC(2026, 10, 28, 12));
const NOW_MS = NOW.getTime();
const FAST = 1e9; // creditsPerSecond: a bucket that never throttles, so the charge path runs the debit

/** Two handles on one ledger (two instances of a fleet, or one for stores with one instance), with their metering. */
interface Pair {
  readonly ledgers: readonly [CreditLedger, CreditLedger];
  readonly meterings: readonly [Metering, Metering];
}

type Opener = (t: Test, name: string) => Promise<Pair>;

const memory: Opener = async () => {
  const ledger = new MemoryCreditLedger();
  const metering = new LimiterLedgerMetering(new MemoryRateLimiter(), ledger);
  return { ledgers: [ledger, ledger], meterings: [metering, metering] };
};

const sqlite: Opener = async (t, name) => {
  const dir = mkdtempSync(join(tmpdir(), `tollgate-paid-${name}-`));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const a = openSqliteStore({ path: join(dir, 'tollgate.db') });
  const b = openSqliteStore({ path: join(dir, 'tollgate.db') });
  t.teardown(() => { a.close(); b.close(); });
  return { ledgers: [a.ledger, b.ledger], meterings: [new LimiterLedgerMetering(new MemoryRateLimiter(), a.ledger), new LimiterLedgerMetering(new MemoryRateLimiter(), b.ledger)] };
};

const redisServer = await startRedisServer();
t.teardown(() => redisServer.stop());
const cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 0 });
t.teardown(() => cluster.stop());

async function openRedis(t: Test, connect: () => RedisStore): Promise<[RedisStore, RedisStore]> {
  const a = connect();
  const b = connect();
  await a.open();
  await b.open();
  t.teardown(async () => { await a.close(); await b.close(); });
  return [a, b];
}

const redis: Opener = async (t, name) => {
  const [a, b] = await openRedis(t, () => createRedisStore({ url: redisServer.url, prefix: `${name}:` }));
  return { ledgers: [a.ledger, b.ledger], meterings: [a.metering, b.metering] };
};

const redisCluster: Opener = async (t, name) => {
  const [a, b] = await openRedis(t, () => createRedisStore({ cluster: { nodes: cluster.seeds.split(',') }, prefix: `${name}:` }));
  return { ledgers: [a.ledger, b.ledger], meterings: [a.metering, b.metering] };
};

const STORES: ReadonlyArray<[string, Opener]> = [['memory', memory], ['sqlite', sqlite], ['redis', redis], ['redis cluster', redisCluster]];

function taken(result: DebitResult): DebitTaken;
function taken(result: Charge): Charged;
function taken(result: DebitResult | Charge): DebitTaken | Charged {
  if (!result.ok) throw new Error(`expected the debit to be taken, got ${JSON.stringify(result)}`);
  return result;
}

for (const [store, open] of STORES) {
  const slug = store.replace(' ', '-');

  t.test(`${store}: a top-up is applied once per id`, async (t) => {
    const { ledgers: [ledger, other] } = await open(t, `${slug}-topup`);
    t.equal(await ledger.topUp('k', 500, 'pay-1'), true, 'the first top-up of an id is applied');
    t.equal(await other.topUp('k', 500, 'pay-1'), false, 'the same id again (from a second instance) is not');
    t.equal(await ledger.topUp('k', 70, 'pay-2'), true);
    t.equal((await other.balance('k', 100, NOW)).paidRemaining, 570);
    t.equal((await ledger.balance('k', 100, NOW)).used, 0, 'a top-up is not the day\'s');
    t.equal((await ledger.balance('other', 100, NOW)).paidRemaining, 0, 'nor another key\'s');
  });

  t.test(`${store}: a debit takes the day first, then the paid balance, all or nothing; a refund puts each part back, once`, async (t) => {
    const { ledgers: [ledger] } = await open(t, `${slug}-split`);
    await ledger.topUp('k', 150, 'bundle');
    const dayOnly = taken(await ledger.debit('k', 80, 100, NOW));
    t.same([dayOnly.receipt.paid, dayOnly.remaining, dayOnly.paidRemaining], [0, 20, 150], 'within the day: nothing paid');
    const split = taken(await ledger.debit('k', 50, 100, NOW));
    t.same([split.receipt.credits, split.receipt.paid, split.remaining, split.paidRemaining], [50, 30, 0, 120], 'split: 20 from the day, 30 paid');
    const paidOnly = taken(await ledger.debit('k', 120, 100, NOW));
    t.same([paidOnly.receipt.paid, paidOnly.remaining, paidOnly.paidRemaining], [120, 0, 0], 'the day spent: all from the paid balance');
    const refused = await ledger.debit('k', 1, 100, NOW);
    t.same(refused.ok ? refused : { ok: refused.ok, remaining: refused.remaining, paidRemaining: refused.paidRemaining }, { ok: false, remaining: 0, paidRemaining: 0 }, 'both spent: refused');

    await ledger.refund(split.receipt);
    await ledger.refund({ ...split.receipt });
    const back = await ledger.balance('k', 100, NOW);
    t.same([back.used, back.paidRemaining], [80, 30], 'the split debit\'s 20 back into the day, its 30 into the paid balance, once');

    // 20 left today and 30 paid: 60 does not fit, and nothing is taken from either.
    const tooMuch = await ledger.debit('k', 60, 100, NOW);
    t.equal(tooMuch.ok, false);
    const after = await ledger.balance('k', 100, NOW);
    t.same([after.used, after.paidRemaining], [80, 30], 'a refused debit takes nothing from either balance');
    const exact = taken(await ledger.debit('k', 50, 100, NOW));
    t.same([exact.receipt.paid, exact.remaining, exact.paidRemaining], [30, 0, 0], '50 = the 20 left today and the 30 paid');
  });

  t.test(`${store}: charges through the metering (the stores' one-script path, batched) split and refund the same way`, async (t) => {
    const { ledgers: [ledger], meterings: [metering] } = await open(t, `${slug}-charge`);
    await ledger.topUp('k', 100, 'bundle');
    const limits = { dailyCredits: 50, creditsPerSecond: FAST };
    const single = taken(await metering.charge('k', 40, limits, NOW_MS));
    t.same([single.receipt.paid, single.remaining, single.paidRemaining], [0, 10, 100]);
    // One turn: a batch of charges of one key.
    const batch = await Promise.all([30, 30, 30, 30, 30].map((credits) => metering.charge('k', credits, limits, NOW_MS)));
    t.same(batch.map((c) => c.ok), [true, true, true, false, false], '10 left today and 100 paid pay for three of 30');
    t.same(batch.filter((c) => c.ok).map((c) => taken(c).receipt.paid), [20, 30, 30], 'the first takes the day\'s last 10');
    const refused = batch[3]!;
    t.match(refused, { ok: false, code: 'CREDITS_EXHAUSTED', remaining: 0, paidRemaining: 20 });
    await taken(batch[1]!).refund();
    await taken(batch[1]!).refund();
    await taken(batch[0]!).refund();
    const back = await ledger.balance('k', 50, NOW);
    t.same([back.used, back.paidRemaining], [40, 70], 'each refund puts its day part and its paid part back');
  });

  t.test(`${store}: two instances' concurrent debits never both spend the last paid credits`, async (t) => {
    const { ledgers, meterings } = await open(t, `${slug}-race`);
    await ledgers[0].topUp('k', 100, 'bundle');
    const debits = Array.from({ length: 10 }, (_, i) => ledgers[i % 2]!.debit('k', 30, 0, NOW));
    const charges = Array.from({ length: 10 }, (_, i) => meterings[i % 2]!.charge('k', 3, { dailyCredits: 0, creditsPerSecond: FAST }, NOW_MS));
    const asked = [...(await Promise.all(debits)).map((r) => [30, r] as const), ...(await Promise.all(charges)).map((r) => [3, r] as const)];
    const spent = asked.reduce((sum, [, r]) => sum + (r.ok ? r.receipt.paid : 0), 0);
    const left = (await ledgers[1].balance('k', 0, NOW)).paidRemaining;
    t.ok(spent <= 100, `never more than was bought (${spent})`);
    t.equal(spent + left, 100, 'what was taken and what is left add up to what was bought');
    t.ok(asked.every(([cost, r]) => !r.ok || r.receipt.paid === cost), 'with no day left, each debit taken is all paid');
    const refusals = asked.filter(([, r]) => !r.ok);
    t.ok(refusals.length >= 10 - 3, 'at most three of 30 fit 100, so the rest were refused');
    t.ok(refusals.every(([cost, r]) => !r.ok && 'paidRemaining' in r && r.paidRemaining < cost), 'each refusal saw too few paid credits for it');
  });
}

t.test('redis: a debit cancelled after it ran gives both parts back (its marker records the split); scripts per call unchanged', async (t) => {
  const [store] = await openRedis(t, () => createRedisStore({ url: redisServer.url, prefix: 'cancel:' }));
  const client = store.connection.client;
  const names = store.connection.names;
  const balance = names.balance('2026-11-28', 'k');
  const paid = names.paid('k');
  await store.ledger.topUp('k', 100, 'bundle');
  t.same(await client.tgDebit(balance, names.markerBeside(balance, 'd1'), paid, 80, 50, 86_400_000, 60_000), [1, 50, 70, 30], 'taken: 50 from the day, 30 paid');
  t.same(await client.tgDebit(balance, names.markerBeside(balance, 'd1'), paid, 80, 50, 86_400_000, 60_000), [1, 50, 70, 30], 'sent again: the same answer, nothing taken twice');
  // Its outcome unknown to the gateway (a timeout): cancelled with the total only.
  await client.tgRefund(balance, names.markerBeside(balance, 'd1'), paid, 80, 0, 60_000, 0);
  t.same([await client.get(balance), await client.get(paid)], ['0', '100'], 'the day part and the paid part are back');

  // A batch cancelled after it ran: both parts it took, from its marker.
  const bucket = names.bucket('k');
  const marker = names.markerBeside(balance, 'b1');
  const answer = await client.tgTakeDebitBatch(bucket, balance, marker, paid, FAST, FAST, NOW_MS, 50, 86_400_000, 60_000, 40, 40);
  t.same(answer, [1, 0, 1, 40, 100, 0, 1, 0, 1, 50, 70, 30]);
  await client.tgRefund(balance, marker, paid, 80, 0, 60_000, 0);
  t.same([await client.get(balance), await client.get(paid)], ['0', '100']);

  // The batched charge of many calls is still one script, with paid credits spent inside it.
  const before = await scriptsRun(store);
  const charges = await Promise.all(Array.from({ length: 50 }, () => store.metering.charge('k', 3, { dailyCredits: 60, creditsPerSecond: FAST }, NOW_MS)));
  t.equal((await scriptsRun(store)) - before, 1, 'fifty charges, one script');
  t.equal(charges.filter((c) => c.ok).length, 50, '60 today and 100 paid pay for fifty of 3');
  t.equal((await store.ledger.balance('k', 60, NOW)).paidRemaining, 10);
});

t.test('sqlite: a database from before the paid balance is migrated on open, its balances kept', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-paid-migrate-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'tollgate.db');
  const old = openSqliteStore({ path });
  taken(await old.ledger.debit('k', 70, 100, NOW));
  // The schema as the previous version left it: no paid tables, version 4.
  old.db.exec('DROP TABLE paid_balances; DROP TABLE top_ups; PRAGMA user_version = 4;');
  old.close();
  const store = openSqliteStore({ path });
  t.teardown(() => store.close());
  t.equal(store.db.pragma('user_version', { simple: true }), 5);
  t.equal(store.ledger.balance('k', 100, NOW).used, 70, 'the day\'s balance is kept');
  t.equal(await store.ledger.topUp('k', 50, 'bundle'), true);
  const split = taken(await store.ledger.debit('k', 60, 100, NOW));
  t.same([split.receipt.paid, split.paidRemaining], [30, 20]);
});

t.test('the event meter (subscriptions) spends paid credits once the day is spent; its refund puts each part back', async (t) => {
  const ledger = new MemoryCreditLedger();
  const usage: UsageEvent[] = [];
  const meter = createEventMeter(new LimiterLedgerMetering(new MemoryRateLimiter(), ledger), (event) => void usage.push(event), new ManualClock(NOW_MS));
  const refund = createEventRefund((event) => void usage.push(event), pino({ level: 'silent' }));
  const key: ApiKeyRecord = { id: 'sub', plan: 'tiny' };
  const plan: Plan = { name: 'tiny', dailyCredits: 10, creditsPerSecond: 100, failover: false };
  const events = Array.from({ length: 3 }, () => ({ key, plan, network: 'eth', method: 'eth_subscription', credits: 10 }));
  await ledger.topUp('sub', 25, 'bundle');
  const charge = await meter(events);
  t.match(charge, { ok: true, receipt: { credits: 30, paid: 20 } }, 'three events of 10: the day\'s 10, then 20 paid');
  const more = await meter(events[0]!);
  t.match(more, { ok: false, remaining: 0, paidRemaining: 5 }, 'the next one finds 5 paid credits, too few');
  if (!charge.ok) throw new Error('expected the events to be charged');
  refund(charge, events);
  const back = ledger.balance('sub', 10, NOW);
  t.same([back.used, back.paidRemaining], [0, 25], 'undelivered: the day\'s 10 and the 20 paid are back');
  t.same(usage.map((u) => u.credits), [30, -30]);
});

const COST = 80; // eth_blockNumber
const upstream = await startTinyUpstream();
t.teardown(() => upstream.close());
const TOKEN = 'admin-token-for-paid-balance-tests-0123';

const GATEWAY_STORES: ReadonlyArray<[string, () => Parameters<typeof startTestGateway>[1][number] | undefined]> = [
  ['memory', () => undefined],
  ['sqlite', () => ledgerSqlite({ path: ':memory:' })],
  ['redis', () => ledgerRedis({ url: redisServer.url, prefix: 'gw:' })],
];

for (const [store, plugin] of GATEWAY_STORES) {
  t.test(`gateway on ${store}: a key whose day is spent is served from its top-up until it runs out, then 402; credits charged = calls answered`, async (t) => {
    const storePlugin = plugin();
    const gw = await startTestGateway(
      {
        plans: { tiny: { dailyCredits: 2 * COST, creditsPerSecond: 1e6, failover: false } },
        keys: [{ key: `paid-key-${store}-000001`, id: `paid-${store}`, plan: 'tiny' }],
        networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url }] }],
        plugins: { admin: { token: TOKEN } },
      },
      [...(storePlugin === undefined ? [] : [storePlugin]), admin(), httpTransport(), evmFamily()],
    );
    t.teardown(() => gw.close());
    const url = gw.url('eth', `paid-key-${store}-000001`);
    const id = `paid-${store}`;
    const answeredBefore = upstream.answered();
    let answered = 0;
    const call = async (): Promise<number> => {
      const res = await post(url, rpc('eth_blockNumber', []));
      if (res.status === 200) answered++;
      return res.status;
    };
    t.same([await call(), await call(), await call()], [200, 200, 402], 'the day\'s two calls, then 402');

    // Top up by hand through the admin API: 3 calls and 40 credits; the same reference twice adds once.
    const topUp = await adminRequest(`${gw.origin}/admin/v1/keys/${id}/credits`, TOKEN, 'POST', { credits: 3 * COST + 40, id: 'invoice-7' });
    t.equal(topUp.status, 201);
    t.match(topUp.body, { applied: true, balance: { remaining: 0, paidRemaining: 3 * COST + 40 } });
    const again = await adminRequest(`${gw.origin}/admin/v1/keys/${id}/credits`, TOKEN, 'POST', { credits: 3 * COST + 40, id: 'invoice-7' });
    t.equal(again.status, 200);
    t.match(again.body, { applied: false, balance: { paidRemaining: 3 * COST + 40 } });
    t.equal((await adminRequest(`${gw.origin}/admin/v1/keys/${id}/credits`, TOKEN, 'POST', { credits: -5, id: 'bad' })).status, 400);

    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push(await call());
    t.same(statuses, [200, 200, 200, 402], 'three more calls on the paid balance, then 402');
    const refused = await post(url, rpc('eth_blockNumber', []));
    t.match(refused.json, { error: { code: -33000, data: { remaining: 0, paidRemaining: 40, cost: COST } } }, 'the 402 says what is left of both');

    const shown = await adminRequest(`${gw.origin}/admin/v1/keys/${id}`, TOKEN, 'GET');
    t.match(shown.body, { balance: { used: 2 * COST, remaining: 0, paidRemaining: 40 } }, 'the admin API shows both balances');
    const usage = await adminRequest(`${gw.origin}/admin/v1/keys/${id}/usage`, TOKEN, 'GET');
    t.match(usage.body, { days: [{ balanceUsed: 2 * COST }], balance: { remaining: 0, paidRemaining: 40 } }, 'and so does its usage');
    const ledger = gw.gateway.container.resolve(Tokens.CreditLedger);
    const balance = await ledger.balance(id, 2 * COST, new Date(gw.gateway.clock.now()));
    const charged = balance.used + (3 * COST + 40 - balance.paidRemaining);
    t.equal(answered, 5);
    t.equal(upstream.answered() - answeredBefore, answered, 'the upstream answered exactly the calls served');
    t.equal(charged, answered * COST, 'credits charged = calls answered × cost');
  });
}

t.test('redis down under the allowance policy: a key whose day is spent and that has paid credits gets 503, not 402', async (t) => {
  const own = await startRedisServer();
  t.teardown(() => own.stop());
  const gw = await startTestGateway(
    {
      plans: { tiny: { dailyCredits: 2 * COST, creditsPerSecond: 1e6, failover: false } },
      keys: [{ key: 'paid-offline-key-000001', id: 'offline', plan: 'tiny' }, { key: 'paid-offline-key-000002', id: 'unpaid', plan: 'tiny' }],
      networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url }] }],
    },
    [ledgerRedis({ url: own.url, prefix: 'offline:', whenUnavailable: 'allowance', localAllowance: 5 * COST, commandTimeoutMs: 500 }), httpTransport(), evmFamily()],
  );
  t.teardown(() => gw.close());
  const ledger = gw.gateway.container.resolve(Tokens.CreditLedger);
  t.equal(await ledger.topUp('offline', 3 * COST, 'bundle'), true);
  const paid = gw.url('eth', 'paid-offline-key-000001');
  const unpaid = gw.url('eth', 'paid-offline-key-000002');
  const statuses = async (url: string, n: number): Promise<number[]> => {
    const out: number[] = [];
    for (let i = 0; i < n; i++) out.push((await post(url, rpc('eth_blockNumber', []))).status);
    return out;
  };
  t.same(await statuses(paid, 3), [200, 200, 200], 'the day\'s two calls, then one paid');
  t.same(await statuses(unpaid, 3), [200, 200, 402], 'a key without paid credits: 402 once its day is spent');
  await own.kill();
  t.same(await statuses(paid, 2), [503, 503], 'paid credits are spent only through Redis: unavailable, not exhausted');
  t.same(await statuses(unpaid, 1), [402], 'the key with nothing paid is refused as before');
  await t.rejects(Promise.resolve().then(() => ledger.topUp('offline', COST, 'while-down')), /unreachable|unavailable/i, 'a top-up is never kept locally');
});
