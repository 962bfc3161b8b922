/**
 * Ledger writes are keyed on the debit id: a refund applies once per id whatever object carries it, and
 * in Redis a debit that arrives after its cancellation (a command that timed out and ran late) changes
 * nothing, nor does a usage write or a settlement sent twice.
 */
import t from 'tap';
import { MemoryCreditLedger } from '../core/store-api.js';
import { createRedisStore } from '../plugins/ledger-redis/index.js';
import { redisAvailable, startRedisServer } from './helpers/redis-server.js';

const now = new Date(Date.UTC(2026, 4, 1, 12));

t.test('memory: a refund applies once per debit id, whatever copy of the receipt asks', async (t) => {
  const ledger = new MemoryCreditLedger();
  const a = ledger.debit('k', 80, 1000, now);
  const b = ledger.debit('k', 80, 1000, now);
  if (!a.ok || !b.ok) throw new Error('debits refused');
  t.not(a.receipt.id, b.receipt.id, 'each debit has its own id');
  ledger.refund(a.receipt);
  ledger.refund({ ...a.receipt });
  t.equal(ledger.balance('k', 1000, now).used, 80, 'refunded once');
  ledger.refund({ ...b.receipt });
  t.equal(ledger.balance('k', 1000, now).used, 0, 'the other debit is its own');
});

t.test('redis: scripts apply each debit, refund, settlement and usage write at most once', async (t) => {
  if (!(await redisAvailable())) {
    t.fail('redis-server is not installed (apt-get install redis-server)');
    return;
  }
  const redis = await startRedisServer();
  t.teardown(() => redis.stop());
  const store = createRedisStore({ url: redis.url, prefix: 'once:' });
  await store.open();
  t.teardown(() => store.close());
  const client = store.connection.client;
  const balance = 'once:bal:2026-05-01:{k}';
  const marker = (id: string): string => `once:once:{k}:${id}`;
  const paid = 'once:paid:{k}';
  const WINDOW = 60_000;

  t.same(await client.tgDebit(balance, marker('d1'), paid, 80, 1000, 86_400_000, WINDOW), [1, 80, 0, 0], 'a debit is taken');
  t.same(await client.tgDebit(balance, marker('d1'), paid, 80, 1000, 86_400_000, WINDOW), [1, 80, 0, 0], 'the same id again (a resend) answers that it was taken, and changes nothing');
  t.equal(await client.get(balance), '80');
  await client.tgRefund(balance, marker('d1'), paid, 80, 1, WINDOW, 0);
  await client.tgRefund(balance, marker('d1'), paid, 80, 1, WINDOW, 0);
  t.equal(await client.get(balance), '0', 'its refund, sent twice, gives back once');

  t.same(await client.tgDebit(balance, marker('d2'), paid, 80, 1000, 86_400_000, WINDOW), [1, 80, 0, 0]);
  await client.tgRefund(balance, marker('d2'), paid, 80, 0, WINDOW, 0);
  t.equal(await client.get(balance), '0', 'cancelling a debit Redis ran gives it back');

  await client.tgRefund(balance, marker('d3'), paid, 80, 0, WINDOW, 0);
  t.same(await client.tgDebit(balance, marker('d3'), paid, 80, 1000, 86_400_000, WINDOW), [2, 0, 0, 0], 'a debit arriving after its cancellation is a no-op');
  t.equal(await client.get(balance), '0');

  t.equal(await client.tgSettle(balance, marker('s1'), 30, 86_400_000, WINDOW), 30, 'a settlement adds its credits');
  t.equal(await client.tgSettle(balance, marker('s1'), 30, 86_400_000, WINDOW), -1, 'the same settlement again adds nothing');

  const usage = 'once:use:2026-05-01:{k}';
  t.equal(await client.tgUsage(usage, marker('u1'), 86_400_000, WINDOW, 'eth_call', 3, 240, 10, 0, 0, 0), 1);
  t.equal(await client.tgUsage(usage, marker('u1'), 86_400_000, WINDOW, 'eth_call', 3, 240, 10, 0, 0, 0), 0, 'a usage write sent twice counts once');
  t.same(await store.usage.usage('k', '2026-05-01'), { eth_call: { calls: 3, credits: 240, bytes: 10, failed: 0 } });
  t.equal(await client.tgUsage(usage, marker('u2'), 86_400_000, WINDOW, 'eth_getBlockByNumber', 3, 240, 10, 0, 2, 1), 1);
  t.equal(await client.tgUsage(usage, marker('u2'), 86_400_000, WINDOW, 'eth_getBlockByNumber', 3, 240, 10, 0, 2, 1), 0, 'its cache hits and misses, sent twice, count once');
  t.same((await store.usage.usage('k', '2026-05-01')).eth_getBlockByNumber, { calls: 3, credits: 240, bytes: 10, failed: 0, cacheHits: 2, cacheMisses: 1 });
  const ttl = await client.pttl(marker('d1'));
  t.ok(ttl > 0 && ttl <= WINDOW, `markers expire after the idempotency window (${ttl} ms left)`);
});
