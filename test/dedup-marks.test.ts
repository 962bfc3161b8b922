import t, { type Test } from 'tap';
import type { DedupMarks } from '../core/store-api.js';
import { MemoryDedupMarks } from '../core/metering/memory-dedup-marks.js';
import { RedisDedupMarks } from '../plugins/ledger-redis/redis-dedup-marks.js';
import { SqliteDedupMarks } from '../plugins/ledger-sqlite/sqlite-dedup-marks.js';
import { twoRedisStores, twoSqliteStores } from './helpers/store-pairs.js';

// The DedupMarks contract, checked the same way on each implementation: memory (the core's default),
// SQLite (two connections to one file, as two workers hold) and Redis (two connections, as two instances).

const WINDOW = 60_000;
const T0 = Date.UTC(2026, 0, 5, 12);

async function contract(t: Test, first: DedupMarks, second: DedupMarks): Promise<void> {
  t.equal(await first.mark('tx-a', WINDOW, T0), true, 'the first mark');
  t.equal(await second.mark('tx-a', WINDOW, T0 + 1), false, 'a repeat through the other connection');
  t.equal(await first.mark('tx-a', WINDOW, T0 + WINDOW - 1), false, 'a repeat just before the window ends (the window runs from the first)');
  t.equal(await second.mark('tx-b', WINDOW, T0 + 2), true, 'another id is another first');
  t.equal(await second.mark('tx-a', WINDOW, T0 + WINDOW), true, 'once the window ended, a first again');
  t.equal(await first.mark('tx-a', WINDOW, T0 + WINDOW + 1), false, 'and the new window holds');

  await first.unmark('tx-b');
  t.equal(await second.mark('tx-b', WINDOW, T0 + 3), true, 'a mark taken back: the next is the first');
  await t.resolves(Promise.resolve(second.unmark('tx-never')), 'taking back a mark that is not there is no error');
  t.equal(await first.mark('tx-never', WINDOW, T0 + 3), true, 'and leaves no mark behind: the next is the first');

  const at = await Promise.all([first.mark('tx-c', WINDOW, T0 + 4), second.mark('tx-c', WINDOW, T0 + 4), first.mark('tx-c', WINDOW, T0 + 4)]);
  t.same(at.filter(Boolean), [true], 'marks made at once: exactly one first');
}

t.test('memory', async (t) => {
  const marks = new MemoryDedupMarks();
  await contract(t, marks, marks);
  // Many marks over many windows: the expired ones are swept, the live one stays.
  for (let i = 0; i < 5_000; i++) marks.mark(`bulk-${i}`, 1, T0 + i);
  t.equal(marks.mark('bulk-4999', 1, T0 + 4_999), false);
});

t.test('SQLite: two connections to one database', async (t) => {
  const [a, b] = twoSqliteStores(t, 'dedup');
  await contract(t, new SqliteDedupMarks(a.db), new SqliteDedupMarks(b.db));
});

t.test('Redis: two connections', async (t) => {
  const [a, b] = await twoRedisStores(t, 'dm:');
  // Redis expires by its own clock: the contract's times are given relative to now there.
  const now = Date.now() - T0;
  const shifted = (marks: RedisDedupMarks): DedupMarks => ({ mark: (id, w, at) => marks.mark(id, w, at + now), unmark: (id) => marks.unmark(id) });
  await contract(t, shifted(new RedisDedupMarks(a.connection)), shifted(new RedisDedupMarks(b.connection)));
  const keys = (await a.connection.client.keys('dm:dedup:*')).sort();
  t.same(keys, ['dm:dedup:tx-a', 'dm:dedup:tx-b', 'dm:dedup:tx-c', 'dm:dedup:tx-never'], 'one key per mark, under the prefix');
  const ttl = await a.connection.client.pttl('dm:dedup:tx-c');
  t.ok(ttl > 0 && ttl <= WINDOW, `Redis collects a mark after its window (${ttl} ms left)`);
});
