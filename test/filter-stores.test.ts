import t, { type Test } from 'tap';
import { MemoryFilterStore, type FilterStore } from '../core/store-api.js';
import { RedisFilterStore } from '../plugins/ledger-redis/index.js';
import { SqliteFilterStore } from '../plugins/ledger-sqlite/index.js';
import { twoRedisStores, twoSqliteStores } from './helpers/store-pairs.js';

// The FilterStore contract, checked the same way on each implementation: memory (the core's default),
// SQLite (two connections to one file, as two workers hold) and Redis (two connections, as two instances).

const LIMITS = { maxPerKey: 2, idleMs: 300_000 };
const T0 = Date.UTC(2026, 0, 5, 12);

async function contract(t: Test, first: FilterStore, second: FilterStore): Promise<void> {
  const id = await first.create('key-a', { spec: '{"kind":"blocks"}', cursor: '0x5' }, LIMITS, T0);
  t.match(id, /^0x[0-9a-f]{32}$/);
  t.same(await second.touch('key-a', id!, LIMITS.idleMs, T0 + 1), { spec: '{"kind":"blocks"}', cursor: '0x5' }, 'the other connection sees it');
  t.equal(await second.touch('key-b', id!, LIMITS.idleMs, T0 + 1), undefined, 'another key does not');

  t.equal(await first.advance('key-a', id!, '0x5', '0x9', LIMITS.idleMs, T0 + 2), true, 'the cursor moves from what it was');
  t.equal(await second.advance('key-a', id!, '0x5', '0x7', LIMITS.idleMs, T0 + 2), false, 'a poll that read the old cursor does not move it again');
  t.equal((await second.touch('key-a', id!, LIMITS.idleMs, T0 + 3))?.cursor, '0x9');

  t.match(await second.create('key-a', { spec: '{}', cursor: '0x0' }, LIMITS, T0 + 4), /^0x/);
  t.equal(await first.create('key-a', { spec: '{}', cursor: '0x0' }, LIMITS, T0 + 4), undefined, 'the key holds its 2 filters');
  t.match(await first.create('key-b', { spec: '{}', cursor: '0x0' }, LIMITS, T0 + 4), /^0x/, 'the bound is per key');

  // Polled at T0 + 3: alive until T0 + 3 + idle, expired after.
  t.ok(await first.touch('key-a', id!, LIMITS.idleMs, T0 + 3 + LIMITS.idleMs - 1), 'alive just before its idle time ends (and touched again)');
  const later = T0 + 3 + 2 * LIMITS.idleMs;
  t.equal(await second.touch('key-a', id!, LIMITS.idleMs, later), undefined, 'expired after 5 idle minutes');
  t.match(await first.create('key-a', { spec: '{}', cursor: '0x0' }, LIMITS, later), /^0x/, 'expired filters do not count against the bound');

  const gone = await first.create('key-c', { spec: '{}', cursor: '0x0' }, LIMITS, later);
  t.equal(await second.remove('key-c', gone!, later), true);
  t.equal(await first.remove('key-c', gone!, later), false, 'removed once');
  t.equal(await first.touch('key-c', gone!, LIMITS.idleMs, later), undefined);
}

t.test('memory', async (t) => {
  const store = new MemoryFilterStore();
  await contract(t, store, store);
});

t.test('SQLite: two connections to one database', async (t) => {
  const [a, b] = twoSqliteStores(t, 'filters');
  await contract(t, new SqliteFilterStore(a.db), new SqliteFilterStore(b.db));
});

t.test('Redis: two connections, keys tagged per API key', async (t) => {
  const [a, b] = await twoRedisStores(t, 'fs:');
  // Redis expires by its own clock: the contract's times are given relative to now there.
  const now = Date.now() - T0;
  const shifted = (store: RedisFilterStore): FilterStore => ({
    create: (k, f, l, at) => store.create(k, f, l, at + now),
    touch: (k, i, idle, at) => store.touch(k, i, idle, at + now),
    advance: (k, i, from, to, idle, at) => store.advance(k, i, from, to, idle, at + now),
    remove: (k, i, at) => store.remove(k, i, at + now),
  });
  const first = new RedisFilterStore(a.connection);
  await contract(t, shifted(first), shifted(new RedisFilterStore(b.connection)));
  const keys = await a.connection.client.keys('fs:filter:*');
  t.ok(keys.length > 0 && keys.every((k) => /^fs:filter:\{key-[abc]\}/.test(k)), `every key carries its API key's hash tag (${keys.join(', ')})`);
});
