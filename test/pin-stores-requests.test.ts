import t, { type Test } from 'tap';
import type { PinRecord, PinStore } from '../core/store-api.js';
import { MemoryPinStore } from '../core/network/memory-pin-store.js';
import { RedisPinStore } from '../plugins/ledger-redis/index.js';
import { SqlitePinStore } from '../plugins/ledger-sqlite/index.js';
import { twoRedisStores, twoSqliteStores } from './helpers/store-pairs.js';

// What the Pinning Service API keeps in the PinStore, checked the same way on each implementation:
// a pin request's id, state, meta and origins with the pin; found by request id; settled (state and
// weight, within the allowance, atomically) as the node works on it.

const T0 = Date.UTC(2026, 0, 5, 12);
const CID_1 = 'QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o';
const CID_2 = 'QmWkHFpYBZ9mpPRreRbMhhYWXfUhBAue3JkbbpFqwowSRb';

const REQUEST: PinRecord = {
  keyId: 'key-a',
  cid: CID_1,
  name: 'dataset',
  bytes: 0,
  createdAt: T0,
  requestId: '0b6f3c1e-8f3a-4d55-9c71-5b8d4e2f9a10',
  status: 'queued',
  meta: { app_id: 'tests', version: '2' },
  origins: ['/ip4/198.51.100.7/tcp/4001/p2p/12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN'],
};

const ID = REQUEST.requestId!;

async function contract(t: Test, first: PinStore, second: PinStore): Promise<void> {
  t.same(await first.add(REQUEST, 100), { ok: true, added: true, storedBytes: 0 }, 'a queued request weighs nothing yet');
  t.equal(await second.get('key-a', CID_1), undefined, 'a pin request is not the file API\'s pin of its CID');
  t.same(await second.pinsOf('key-a', CID_1), [REQUEST], 'every field read back by CID');
  t.same(await second.get('key-a', REQUEST.requestId!), REQUEST, 'and by request id');
  t.equal(await second.get('key-b', REQUEST.requestId!), undefined, 'not another key\'s');
  t.equal(await second.get('key-a', 'no-such-request'), undefined);
  t.equal(await first.pinnedByOthers('key-b', CID_1), true, 'a pin in progress holds its CID');

  t.same(await second.settle('key-a', ID, { status: 'pinning' }, 100), { ok: true, storedBytes: 0 });
  t.equal((await first.get('key-a', ID))?.status, 'pinning');
  t.same(await first.add({ keyId: 'key-a', cid: CID_2, bytes: 60, createdAt: T0 + 1 }, 100), { ok: true, added: true, storedBytes: 60 });
  t.same(await second.settle('key-a', ID, { status: 'pinned', bytes: 41 }, 100), { ok: false, storedBytes: 60 }, '60 + 41 pass 100: refused');
  t.same(await first.get('key-a', ID), { ...REQUEST, status: 'pinning' }, 'a refused settlement changes nothing');
  t.same(await second.settle('key-a', ID, { status: 'pinned', bytes: 40 }, 100), { ok: true, storedBytes: 100 }, 'up to the limit exactly');
  t.same(await first.get('key-a', ID), { ...REQUEST, status: 'pinned', bytes: 40 }, 'pinned with its weight, the rest kept');
  t.equal(await second.storedBytes('key-a'), 100);
  t.same(await first.settle('key-a', ID, { status: 'failed', bytes: 0, statusDetails: 'the node gave up' }, 100), { ok: true, storedBytes: 60 }, 'failing frees its bytes');
  t.same(await second.get('key-a', REQUEST.requestId!), { ...REQUEST, status: 'failed', statusDetails: 'the node gave up' });
  t.equal(await first.pinnedByOthers('key-b', CID_1), false, 'a failed pin holds nothing on the node');
  t.equal(await second.pinnedByOthers('key-a', CID_1), false);
  t.same(await second.settle('key-a', ID, { status: 'queued' }, 100), { ok: true, storedBytes: 60 });
  t.equal((await first.get('key-a', ID))?.statusDetails, undefined, 'details belong to the state they were given with');
  t.equal(await first.pinnedByOthers('key-b', CID_1), true, 'queued again: it holds the CID again');
  t.same(await first.settle('key-b', ID, { status: 'pinned', bytes: 1 }, undefined), { ok: false, storedBytes: 0, missing: true }, 'another key\'s pin is not settled');
  t.same(await first.remove('key-a', ID), { ...REQUEST, status: 'queued' }, 'removed whole');
  t.equal(await second.get('key-a', REQUEST.requestId!), undefined, 'not found by its request id after');
  t.same(await second.settle('key-a', ID, { status: 'pinned', bytes: 1 }, undefined), { ok: false, storedBytes: 60, missing: true }, 'a removed pin is not settled');
  t.equal(await first.pinnedByOthers('key-b', CID_1), false, 'nor does settling it make it a holder');
  t.same((await first.list('key-a')).map((p) => p.cid), [CID_2]);

  // One CID through several pin requests (the spec: pinning it again is a new request) and the file API's pin.
  const again = (id: string, at: number): PinRecord => ({ ...REQUEST, keyId: 'key-c', requestId: id, createdAt: at });
  t.same(await first.add(again('req-1', T0 + 10), 50), { ok: true, added: true, storedBytes: 0 });
  t.same(await second.add(again('req-2', T0 + 11), 50), { ok: true, added: true, storedBytes: 0 }, 'a second request of the CID: its own pin');
  t.same(await first.settle('key-c', 'req-1', { status: 'pinning', from: ['queued'] }, 50), { ok: true, storedBytes: 0 });
  t.same(await second.settle('key-c', 'req-1', { status: 'pinning', from: ['queued'] }, 50), { ok: false, storedBytes: 0, moved: true }, 'a compare-and-set: taken once');
  t.same(await first.settle('key-c', 'req-1', { status: 'pinned', bytes: 30, from: ['pinning'] }, 50), { ok: true, storedBytes: 30 });
  t.same(await second.settle('key-c', 'req-2', { status: 'pinned', bytes: 30 }, 50), { ok: true, storedBytes: 30 }, 'the same CID again: counted once');
  t.same(await first.add({ keyId: 'key-c', cid: CID_1, bytes: 30, createdAt: T0 + 12 }, 50), { ok: true, added: true, storedBytes: 30 }, 'the file API\'s pin of it too');
  t.same((await second.pinsOf('key-c', CID_1)).map((p) => p.requestId ?? p.cid), ['req-1', 'req-2', CID_1], 'each pin of the CID, oldest first');
  t.equal(await second.pinnedByOthers('key-a', CID_1), true);
  t.ok(await first.remove('key-c', 'req-1'));
  t.ok(await second.remove('key-c', CID_1));
  t.equal(await first.storedBytes('key-c'), 30, 'still held by the second request');
  t.equal(await second.pinnedByOthers('key-a', CID_1), true, 'and still a holder of the CID');
  t.same(await first.settle('key-c', 'req-2', { status: 'failed', bytes: 0 }, 50), { ok: true, storedBytes: 0 });
  t.equal(await second.pinnedByOthers('key-a', CID_1), false, 'its last pin failed: it holds nothing');
  t.ok(await first.remove('key-c', 'req-2'));
  t.same(await second.list('key-c'), []);
}

t.test('memory', async (t) => {
  const store = new MemoryPinStore();
  await contract(t, store, store);
});

t.test('SQLite: two connections to one database', async (t) => {
  const [a, b] = twoSqliteStores(t, 'pin-requests');
  await contract(t, new SqlitePinStore(a.db), new SqlitePinStore(b.db));
});

t.test('SQLite: a pins table made before the request columns gets them', async (t) => {
  const [a, b] = twoSqliteStores(t, 'pin-requests-old');
  a.db.exec('CREATE TABLE pins (key_id TEXT NOT NULL, cid TEXT NOT NULL, name TEXT, bytes INTEGER NOT NULL, created_at INTEGER NOT NULL, PRIMARY KEY (key_id, cid)) WITHOUT ROWID');
  a.db.exec(`INSERT INTO pins VALUES ('key-a', '${CID_2}', 'old', 7, ${T0})`);
  const store = new SqlitePinStore(a.db);
  t.same(store.get('key-a', CID_2), { keyId: 'key-a', cid: CID_2, name: 'old', bytes: 7, createdAt: T0 }, 'an old pin reads as before, moved to the new table');
  new SqlitePinStore(b.db);
  t.same(await store.add(REQUEST, undefined), { ok: true, added: true, storedBytes: 7 });
  t.same(new SqlitePinStore(b.db).get('key-a', REQUEST.requestId!), REQUEST);
});

t.test('SQLite: the pins of an earlier version\'s table (one per key and CID) move to the new one, once', async (t) => {
  const [a, b] = twoSqliteStores(t, 'pin-requests-move');
  a.db.exec('CREATE TABLE pins (key_id TEXT NOT NULL, cid TEXT NOT NULL, name TEXT, bytes INTEGER NOT NULL, created_at INTEGER NOT NULL, request_id TEXT, status TEXT, details TEXT, meta TEXT, origins TEXT, PRIMARY KEY (key_id, cid)) WITHOUT ROWID');
  a.db.exec(`INSERT INTO pins VALUES ('key-a', '${CID_1}', 'dataset', 5, ${T0}, 'req-old', 'pinned', NULL, '{"app_id":"tests"}', NULL), ('key-a', '${CID_2}', NULL, 7, ${T0 + 1}, NULL, NULL, NULL, NULL, NULL)`);
  const [first, second] = [new SqlitePinStore(a.db), new SqlitePinStore(b.db)];
  t.same(second.get('key-a', 'req-old'), { keyId: 'key-a', cid: CID_1, name: 'dataset', bytes: 5, createdAt: T0, requestId: 'req-old', status: 'pinned', meta: { app_id: 'tests' } }, 'a pin request, by its id');
  t.same(first.get('key-a', CID_2), { keyId: 'key-a', cid: CID_2, bytes: 7, createdAt: T0 + 1 }, 'a file API pin, by its CID');
  t.equal(second.storedBytes('key-a'), 12);
  t.equal(a.db.prepare<[], { n: number }>("SELECT COUNT(*) AS n FROM sqlite_master WHERE name = 'pins'").get()!.n, 0, 'the old table is gone');
});

t.test('Redis: two connections', async (t) => {
  const [a, b] = await twoRedisStores(t, 'pr:');
  await contract(t, new RedisPinStore(a.connection), new RedisPinStore(b.connection));
});
