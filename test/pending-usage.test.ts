// The usage the SQLite and Redis stores gather between writes: totals per key, day, network and method,
// a bound on distinct rows (the Redis store's while Redis is away), and rows taken once.
import t from 'tap';
import { PendingUsage, type UsageEvent } from '../core/store-api.js';

const event = (over: Partial<UsageEvent> = {}): UsageEvent => ({ keyId: 'k', network: 'eth', method: 'eth_call', at: 1000, calls: 1, credits: 26, bytes: 100, failed: false, ...over });

t.test('events of one key, day, network and method add up in one row; others get rows of their own', async (t) => {
  const pending = new PendingUsage();
  t.ok(pending.add(event(), '2026-11-29', 'eth_call'));
  t.ok(pending.add(event({ at: 3000, failed: true, cache: 'miss', credits: 0, bytes: 0 }), '2026-11-29', 'eth_call'));
  t.ok(pending.add(event({ at: 2000, cache: 'hit' }), '2026-11-29', 'eth_call'));
  t.ok(pending.add(event({ network: 'base' }), '2026-11-29', 'eth_call'));
  t.ok(pending.add(event(), '2026-11-30', 'eth_call'));
  t.ok(pending.add(event({ keyId: 'other' }), '2026-11-29', 'eth_call'));
  t.ok(pending.add(event({ method: 'eth_getLogs' }), '2026-11-29', 'eth_getLogs'));
  t.equal(pending.size, 5);
  const rows = pending.take();
  t.same(rows[0], { keyId: 'k', day: '2026-11-29', network: 'eth', method: 'eth_call', calls: 3, credits: 52, bytes: 200, failed: 1, cacheHits: 1, cacheMisses: 1, at: 3000 }, 'the latest time, every total');
  t.same(rows.map((r) => `${r.keyId} ${r.day} ${r.network} ${r.method} ${r.calls}`).sort(), [
    'k 2026-11-29 base eth_call 1',
    'k 2026-11-29 eth eth_call 3',
    'k 2026-11-29 eth eth_getLogs 1',
    'k 2026-11-30 eth eth_call 1',
    'other 2026-11-29 eth eth_call 1',
  ]);
  t.equal(pending.size, 0, 'taken rows are forgotten');
  t.same(pending.take(), []);
});

t.test('past the bound, a new row is refused and an existing one still adds up', async (t) => {
  const pending = new PendingUsage();
  t.ok(pending.add(event(), 'd', 'a', 2));
  t.ok(pending.add(event(), 'd', 'b', 2));
  t.notOk(pending.add(event(), 'd', 'c', 2), 'a third distinct row is refused');
  t.ok(pending.add(event(), 'd', 'a', 2), 'a held row still counts');
  t.same(pending.take().map((r) => [r.method, r.calls]), [['a', 2], ['b', 1]]);
});
