import t, { type Test } from 'tap';
import type { PinStore } from '../core/store-api.js';
import { MemoryPinStore } from '../core/network/memory-pin-store.js';
import { RedisPinStore } from '../plugins/ledger-redis/index.js';
import { SqlitePinStore } from '../plugins/ledger-sqlite/index.js';
import { twoRedisStores, twoSqliteStores } from './helpers/store-pairs.js';

// The PinStore contract, checked the same way on each implementation: memory (the core's default),
// SQLite (two connections to one file, as two workers hold) and Redis (two connections, as two instances).

const T0 = Date.UTC(2026, 0, 5, 12);
const CID_1 = 'QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o';
const CID_2 = 'QmWkHFpYBZ9mpPRreRbMhhYWXfUhBAue3JkbbpFqwowSRb';
const CID_3 = 'QmdFyxZXsFiP4csgfM5uPu99AvFiKH62CSPDw5TP92nr7w';

async function contract(t: Test, first: PinStore, second: PinStore): Promise<void> {
  t.same(await first.add({ keyId: 'key-a', cid: CID_1, name: 'hello', bytes: 20, createdAt: T0 }, 100), { ok: true, added: true, storedBytes: 20 });
  t.same(await second.get('key-a', CID_1), { keyId: 'key-a', cid: CID_1, name: 'hello', bytes: 20, createdAt: T0 }, 'the other connection sees it');
  t.equal(await second.get('key-b', CID_1), undefined, 'another key does not');
  t.same(await second.add({ keyId: 'key-a', cid: CID_1, bytes: 20, createdAt: T0 + 1 }, 100), { ok: true, added: false, storedBytes: 20 }, 'pinned twice: counted once, the first record kept');
  t.equal((await first.get('key-a', CID_1))?.name, 'hello');

  t.same(await second.add({ keyId: 'key-a', cid: CID_2, bytes: 80, createdAt: T0 + 2 }, 100), { ok: true, added: true, storedBytes: 100 }, 'up to the limit exactly');
  t.same(await first.add({ keyId: 'key-a', cid: CID_3, bytes: 1, createdAt: T0 + 3 }, 100), { ok: false, storedBytes: 100 }, 'one byte past it: refused');
  t.equal(await second.get('key-a', CID_3), undefined, 'a refused pin is not recorded');
  t.equal(await first.pinnedByOthers('key-b', CID_3), false, 'nor does it count as a pin of the CID');
  t.same(await first.add({ keyId: 'key-a', cid: CID_3, bytes: 1, createdAt: T0 + 3 }, undefined), { ok: true, added: true, storedBytes: 101 }, 'without a limit: recorded');

  t.same(await first.add({ keyId: 'key-b', cid: CID_1, bytes: 20, createdAt: T0 + 4 }, 50), { ok: true, added: true, storedBytes: 20 }, 'the limit is per key');
  t.equal(await second.pinnedByOthers('key-a', CID_1), true, 'key-b pins what key-a pins');
  t.equal(await second.pinnedByOthers('key-a', CID_2), false, 'only key-a pins CID_2');
  t.equal(await second.pinnedByOthers('key-c', CID_2), true, 'seen from a third key, key-a pins it');

  t.same((await second.list('key-a')).map((p) => p.cid), [CID_1, CID_2, CID_3], 'a key lists its own pins, oldest first');
  t.same((await first.list('key-b')).map((p) => p.cid), [CID_1]);
  t.same(await first.list('key-c'), []);
  t.equal(await second.storedBytes('key-a'), 101);
  t.equal(await second.storedBytes('key-b'), 20);
  t.equal(await second.storedBytes('key-c'), 0);

  t.equal(await first.remove('key-c', CID_1), undefined, 'a key without the pin removes nothing');
  t.equal(await second.pinnedByOthers('key-b', CID_1), true, 'key-a\'s pin stays');
  t.same(await second.remove('key-b', CID_1), { keyId: 'key-b', cid: CID_1, bytes: 20, createdAt: T0 + 4 }, 'key-b removes its own');
  t.equal(await first.remove('key-b', CID_1), undefined, 'removed once');
  t.equal(await first.pinnedByOthers('key-a', CID_1), false, 'now only key-a pins it');
  t.equal((await first.get('key-a', CID_1))?.bytes, 20, 'key-a still does');
  t.equal(await first.storedBytes('key-b'), 0);

  t.ok(await first.remove('key-a', CID_2));
  t.equal(await second.storedBytes('key-a'), 21, 'bytes freed');
  t.same(await second.add({ keyId: 'key-a', cid: CID_2, bytes: 79, createdAt: T0 + 5 }, 100), { ok: true, added: true, storedBytes: 100 }, 'room again');
}

t.test('memory', async (t) => {
  const store = new MemoryPinStore();
  await contract(t, store, store);
});

t.test('SQLite: two connections to one database', async (t) => {
  const [a, b] = twoSqliteStores(t, 'pins');
  await contract(t, new SqlitePinStore(a.db), new SqlitePinStore(b.db));
});

t.test('SQLite: adds from two connections stop at the limit', async (t) => {
  const [a, b] = twoSqliteStores(t, 'pins-race');
  const stores = [new SqlitePinStore(a.db), new SqlitePinStore(b.db)];
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) => stores[i % 2]!.add({ keyId: 'k', cid: `cid-${i}`, bytes: 10, createdAt: T0 + i }, 55)));
  t.equal(results.filter((r) => r.ok).length, 5);
  t.equal(stores[0]!.storedBytes('k'), 50);
});

t.test('Redis: two connections, keys tagged per API key and per CID', async (t) => {
  const [a, b] = await twoRedisStores(t, 'ps:');
  await contract(t, new RedisPinStore(a.connection), new RedisPinStore(b.connection));
  const keys = await a.connection.client.keys('ps:pin*');
  t.ok(keys.length > 0, 'pins are in Redis');
  for (const key of keys) t.match(key, /^ps:(pinsof:\{key-[abc]\}|pinweight:\{key-[abc]\}|pincids:\{key-[abc]\}|pinkeys:\{Qm[1-9A-HJ-NP-Za-km-z]+\})$/, `${key}: one hash tag, the API key's or the CID's`);

  // Two instances racing for the last bytes of an allowance: the check and the write are one script.
  const stores = [new RedisPinStore(a.connection), new RedisPinStore(b.connection)];
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) => stores[i % 2]!.add({ keyId: 'racer', cid: `cid-${i}`, bytes: 10, createdAt: T0 + i }, 55)));
  t.equal(results.filter((r) => r.ok).length, 5, 'five pins of 10 bytes fit in 55');
  t.equal(await stores[1]!.storedBytes('racer'), 50);
  t.equal(await stores[0]!.pinnedByOthers('x', 'cid-19'), results[19]!.ok, 'a refused pin leaves no holder behind');
});
