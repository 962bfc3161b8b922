import t, { type Test } from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import {
  MemoryPaymentJournal,
  RedisPaymentJournal,
  SqlitePaymentJournal,
  paymentIdOf,
  type JournalEntry,
  type PaymentJournal,
  type PaymentPayload,
  type PaymentRequirements,
  type SettlingPayment,
} from '../plugins/payments/index.js';
import type { RedisStore } from '../plugins/ledger-redis/index.js';
import { createRedisStore } from '../plugins/ledger-redis/index.js';
import { redisAvailable, startRedisServer } from './helpers/redis-server.js';
import { startRedisCluster } from './helpers/redis-cluster.js';
import { openRedisStore } from './helpers/redis-store.js';

// The payment journal's contract, once per store: memory, SQLite (a file, two connections), Redis (two
// connections). Two connections stand for two instances of a fleet sharing the store.

if (!(await redisAvailable())) {
  t.fail('redis-server is not installed (apt-get install redis-server); the Redis journal tests need it');
  process.exit(1);
}

const redis = await startRedisServer();
t.teardown(() => redis.stop());
// On a Redis Cluster every script of the journal must touch one slot: a name outside the hash tag would
// fail with CROSSSLOT there.
const cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 0 });
t.teardown(() => cluster.stop());

const NETWORK = 'eip155:8453';
const ASSET = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
const PAY_TO = `0x${'ab'.repeat(20)}`;
const REQUIREMENTS: PaymentRequirements = {
  scheme: 'exact', network: NETWORK, asset: ASSET, amount: '1000000', payTo: PAY_TO, maxTimeoutSeconds: 300, extra: { name: 'USD Coin', version: '2' },
};

let serial = 0;
/** A payment about to be settled: a fresh nonce, `payer` (mixed case, as signed), at `startedAt`. */
function settling(keyId: string, payer: string, startedAt: number): SettlingPayment {
  const nonce = `0x${(++serial).toString(16).padStart(64, '0')}`;
  const payload = {
    x402Version: 2,
    accepted: REQUIREMENTS,
    payload: { signature: `0x${'5a'.repeat(65)}`, authorization: { from: payer, to: PAY_TO, value: '1000000', validAfter: '0', validBefore: '2000000000', nonce } },
    extensions: {},
  } as unknown as PaymentPayload;
  return {
    id: paymentIdOf(NETWORK, ASSET, payer, nonce), keyId, plan: 'pro', credits: 5_000, payer, network: NETWORK, asset: ASSET, amount: '1000000',
    payTo: PAY_TO, nonce, validBefore: 2_000_000_000, payload, requirements: REQUIREMENTS, startedAt,
  };
}

const PAYER_A = `0x${'Cd'.repeat(20)}`;
const PAYER_B = `0x${'eF'.repeat(20)}`;

/** The journal's contract; `second` is another connection to the same store. */
function contract(t: Test, name: string, open: () => Promise<{ first: PaymentJournal; second: PaymentJournal }>): void {
  t.test(name, async (t) => {
    const { first, second } = await open();

    t.test('begin records `settling` with the signed authorization, once per id', async (t) => {
      const p = settling('acme', PAYER_A, 1_000);
      t.equal(await first.begin(p), true);
      t.equal(await second.begin(p), false, 'the other instance finds the id taken');
      t.equal(await first.record({ ...p, transaction: '0x01', settledAt: 1 }), false, 'record does not overwrite it either');
      const entry = await second.get(p.id);
      t.same(entry, {
        id: p.id, keyId: 'acme', plan: 'pro', credits: 5_000, payer: PAYER_A, network: NETWORK, asset: ASSET, amount: '1000000', payTo: PAY_TO,
        state: 'settling', nonce: p.nonce, validBefore: 2_000_000_000, payload: p.payload, requirements: REQUIREMENTS, startedAt: 1_000,
        transaction: undefined, settledAt: undefined, creditedAt: undefined, failure: undefined,
      } satisfies JournalEntry);
      t.equal(await first.get('eip155:1/none'), undefined);
    });

    t.test('one id begun from two connections at once: exactly one wins', async (t) => {
      for (let round = 0; round < 20; round++) {
        const p = settling('race', PAYER_A, 2_000 + round);
        const results = await Promise.all([first.begin(p), second.begin(p), first.begin(p), second.begin(p)]);
        t.equal(results.filter(Boolean).length, 1, `round ${round}: one of four recorded it`);
      }
    });

    t.test('states move forward only, each move once, from either connection', async (t) => {
      const p = settling('acme', PAYER_A, 3_000);
      await first.begin(p);
      t.equal(await first.markCredited(p.id, 3_001), false, 'a settling entry is not credited');
      const moves = await Promise.all([first.markSettled(p.id, '0xaa', 3_002), second.markSettled(p.id, '0xbb', 3_002)]);
      t.equal(moves.filter(Boolean).length, 1, 'settled once');
      const settled = await first.get(p.id);
      t.match(settled, { state: 'settled', settledAt: 3_002 });
      t.ok(settled?.transaction === '0xaa' || settled?.transaction === '0xbb');
      t.equal(await first.markFailed(p.id, 'late', 3_003), false, 'a settled entry does not fail');
      t.same((await second.uncredited()).map((e) => e.id), [p.id]);
      const credits = await Promise.all([first.markCredited(p.id, 3_004), second.markCredited(p.id, 3_004)]);
      t.equal(credits.filter(Boolean).length, 1, 'credited once');
      t.match(await second.get(p.id), { state: 'credited', creditedAt: 3_004, transaction: settled?.transaction });
      t.equal(await first.markSettled(p.id, '0xcc', 3_005), false, 'a credited entry is not settled again');
      t.same(await first.uncredited(), []);
    });

    t.test('a failed entry found settled on chain moves to settled; unfinished holds settling and settled, oldest first', async (t) => {
      const failing = settling('acme', PAYER_B, 4_000);
      const open = settling('acme', PAYER_B, 4_100);
      const settledOne = settling('other', PAYER_B, 4_050);
      for (const p of [open, failing, settledOne]) await first.begin(p);
      await second.markSettled(settledOne.id, '0x11', 4_051);
      t.equal(await first.markFailed(failing.id, 'transaction_failed', 4_001), true);
      t.match(await second.get(failing.id), { state: 'failed', failure: 'transaction_failed' });
      const unfinished = (await second.unfinished()).filter((e) => e.payer === PAYER_B);
      t.same(unfinished.map((e) => [e.id, e.state]), [[settledOne.id, 'settled'], [open.id, 'settling']]);
      t.equal(await second.markSettled(failing.id, '0x22', 4_002), true, 'failed → settled');
      t.match(await first.get(failing.id), { state: 'settled', transaction: '0x22', failure: undefined });
      t.same((await first.uncredited()).filter((e) => e.payer === PAYER_B).map((e) => e.id), [failing.id, settledOne.id]);
      t.equal(await first.markFailed(failing.id, 'again', 4_003), false);
    });

    t.test('listing by key and by payer (any case), newest first, limited', async (t) => {
      const key = `list-${name}`;
      const made = [settling(key, PAYER_A, 10_000), settling(key, PAYER_B, 10_002), settling(key, PAYER_A, 10_001)];
      for (const p of made) await first.begin(p);
      await first.record({ ...settling(key, PAYER_B, 0), settledAt: 10_003, transaction: '0x33' });
      const byKey = await second.list({ keyId: key });
      t.same(byKey.map((e) => e.startedAt), [10_003, 10_002, 10_001, 10_000]);
      t.same(byKey[0]?.state, 'settled');
      t.same((await second.list({ keyId: key, limit: 2 })).map((e) => e.startedAt), [10_003, 10_002]);
      t.same((await second.list({ keyId: key, payer: PAYER_A.toUpperCase().replace('0X', '0x') })).map((e) => e.startedAt), [10_001, 10_000]);
      const byPayer = await first.list({ payer: PAYER_A.toLowerCase() });
      t.ok(byPayer.length >= 2 && byPayer.every((e) => e.payer.toLowerCase() === PAYER_A.toLowerCase()), 'only that payer');
      t.same(byPayer.map((e) => e.startedAt), [...byPayer.map((e) => e.startedAt)].sort((a, b) => b - a), 'newest first');
      t.same(await first.list({ keyId: 'nobody' }), []);
    });
  });
}

contract(t, 'memory', async () => {
  const journal = new MemoryPaymentJournal();
  return { first: journal, second: journal };
});

contract(t, 'sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-journal-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const open = (): Database.Database => {
    const db = new Database(join(dir, 'store.db'));
    db.pragma('journal_mode = WAL');
    db.pragma('busy_timeout = 5000');
    t.teardown(() => db.close());
    return db;
  };
  return { first: new SqlitePaymentJournal(open()), second: new SqlitePaymentJournal(open()) };
});

contract(t, 'redis', async () => {
  const stores: RedisStore[] = [await openRedisStore(redis.url, 'pj:'), await openRedisStore(redis.url, 'pj:')];
  t.teardown(() => Promise.all(stores.map((s) => s.close())));
  return { first: new RedisPaymentJournal(stores[0]!.connection), second: new RedisPaymentJournal(stores[1]!.connection) };
});

contract(t, 'redis cluster', async () => {
  const stores = [createRedisStore({ cluster: { nodes: cluster.seeds.split(',') }, prefix: 'pjc:' }), createRedisStore({ cluster: { nodes: cluster.seeds.split(',') }, prefix: 'pjc:' })];
  for (const store of stores) await store.open();
  t.teardown(() => Promise.all(stores.map((s) => s.close())));
  return { first: new RedisPaymentJournal(stores[0]!.connection), second: new RedisPaymentJournal(stores[1]!.connection) };
});

t.test('the Redis journal keeps its keys in one hash slot, under the store\'s prefix', async (t) => {
  const store = await openRedisStore(redis.url, 'slot:');
  t.teardown(() => store.close());
  await new RedisPaymentJournal(store.connection).begin(settling('acme', PAYER_A, 1));
  const keys = await store.connection.client.keys('slot:*');
  t.ok(keys.length >= 4, `entry and its indexes (${keys.join(', ')})`);
  t.ok(keys.every((k) => k.startsWith('slot:x402:{x402}:')), 'every name carries the one hash tag');
});

t.test('SQLite: the rows of the first version\'s table move into the new one on first open', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-journal-v1-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const db = new Database(join(dir, 'store.db'));
  t.teardown(() => db.close());
  db.exec(`CREATE TABLE x402_payments (id TEXT PRIMARY KEY, key_id TEXT NOT NULL, plan TEXT NOT NULL, credits INTEGER NOT NULL, payer TEXT NOT NULL,
    network TEXT NOT NULL, asset TEXT NOT NULL, amount TEXT NOT NULL, pay_to TEXT NOT NULL, tx TEXT NOT NULL, settled_at INTEGER NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('settled', 'credited')), credited_at INTEGER) WITHOUT ROWID;
    CREATE INDEX x402_payments_uncredited ON x402_payments (settled_at) WHERE state = 'settled';
    CREATE INDEX x402_payments_by_key ON x402_payments (key_id, settled_at);`);
  const insert = db.prepare('INSERT INTO x402_payments VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
  insert.run('a', 'acme', 'pro', 10, PAYER_A, NETWORK, ASSET, '1', PAY_TO, '0x01', 100, 'credited', 101);
  insert.run('b', 'acme', 'pro', 20, PAYER_A, NETWORK, ASSET, '2', PAY_TO, '0x02', 200, 'settled', null);
  const journal = new SqlitePaymentJournal(db);
  t.match(await journal.get('a'), { state: 'credited', transaction: '0x01', startedAt: 100, settledAt: 100, creditedAt: 101, nonce: undefined });
  t.same((await journal.uncredited()).map((e) => e.id), ['b'], 'a settled one is still credited by recover()');
  const p = settling('acme', PAYER_A, 300);
  t.equal(await journal.begin(p), true, 'and the new states are taken');
  t.same((await journal.list({ keyId: 'acme' })).map((e) => e.id), [p.id, 'b', 'a']);
  t.equal(new SqlitePaymentJournal(db) instanceof SqlitePaymentJournal, true, 'opening again changes nothing');
  t.same((await journal.list({ keyId: 'acme' })).length, 3);
});
