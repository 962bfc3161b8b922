import t from 'tap';
import { create, type KuboRPCClient } from 'kubo-rpc-client';
import { request } from 'undici';
import { admin } from '../plugins/admin/index.js';
import { basic, startIpfsGateway } from './helpers/ipfs-gateway.js';
import { leafAndRootCar } from './helpers/car.js';

// Pins that belong to a key, and storage by plan, through the gateway with kubo-rpc-client, the
// embedded node behind it: each key sees and removes only its own pins, the node keeps content while any
// key pins it, and a key past its plan's storageBytes is refused in kubo's error shape.

const ADMIN_TOKEN = 'admin-token-for-pin-tests-0123456789';
const STARTER_BYTES = 100;
const KEYS = {
  a: { key: 'pins-test-key-a-0001', secret: 'pins-test-secret-a', id: 'pins-a', plan: 'growth' },
  b: { key: 'pins-test-key-b-0001', secret: 'pins-test-secret-b', id: 'pins-b', plan: 'growth' },
  c: { key: 'pins-test-key-c-0001', secret: 'pins-test-secret-c', id: 'pins-c', plan: 'starter' },
  /** Never stores anything. */
  idle: { key: 'pins-test-key-d-0001', secret: 'pins-test-secret-d', id: 'pins-idle', plan: 'growth' },
};

const gw = await startIpfsGateway({
  config: {
    keys: Object.values(KEYS),
    plans: { starter: { dailyCredits: 1_000_000, creditsPerSecond: 1_000, failover: false } },
    plugins: {
      // Three keys start at once from one address: the refusal budget of secret checks lets them all in.
      ipfs: { secretChecksPerSourcePerSecond: 50, secretChecksPerSecond: 50, plans: { core: false, starter: { readsPerSecond: 50, writesPerSecond: 50, storageBytes: STARTER_BYTES } } },
      admin: { token: ADMIN_TOKEN },
    },
  },
  plugins: [admin()],
});
t.teardown(() => gw.close());

function clientOf(key: { key: string; secret: string }): KuboRPCClient {
  return create({ url: gw.api, headers: { authorization: basic(key.key, key.secret) } });
}
const a = clientOf(KEYS.a);
const b = clientOf(KEYS.b);
const c = clientOf(KEYS.c);
const node = create({ url: `${gw.devnet.helia.instance()!.url}/api/v0` });
const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

async function pinsOf(client: KuboRPCClient): Promise<string[]> {
  const cids: string[] = [];
  for await (const pin of client.pin.ls()) cids.push(pin.cid.toString());
  return cids.sort();
}

async function catText(client: KuboRPCClient, cid: string): Promise<string> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of client.cat(cid)) chunks.push(chunk);
  return Buffer.concat(chunks).toString();
}

async function adminGet(path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await request(`${gw.origin}/admin/v1${path}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
}

t.test('what add pins is the caller\'s: B\'s pin.ls does not show A\'s pins', async (t) => {
  const ofA = await a.add(bytes('only for A\n'));
  const ofB = await b.add(bytes('only for B\n'));
  const aPins = await pinsOf(a);
  t.ok(aPins.includes(ofA.cid.toString()), 'A lists what it added');
  t.notOk(aPins.includes(ofB.cid.toString()), 'A does not list B\'s');
  const bPins = await pinsOf(b);
  t.ok(bPins.includes(ofB.cid.toString()), 'B lists what it added');
  t.notOk(bPins.includes(ofA.cid.toString()), 'B does not list A\'s');
  for await (const pin of a.pin.ls({ paths: [ofA.cid] })) t.equal(pin.type, 'recursive', 'pins are recursive');
  await t.rejects(async () => {
    for await (const _ of b.pin.ls({ paths: [ofA.cid] })) t.fail('B got an entry for A\'s pin');
  }, { message: new RegExp(`path '${ofA.cid.toString()}' is not pinned`) }, 'asked by CID, A\'s pin is not B\'s');
  t.ok((await pinsOf(node)).includes(ofA.cid.toString()), 'the node pins it');
});

t.test('add records its roots: the wrapping directory, else each top-level entry, with progress and quieter too', async (t) => {
  const files = [
    { path: 'site/index.html', content: bytes('<h1>hi</h1>\n') },
    { path: 'site/about.html', content: bytes('<p>about</p>\n') },
  ];
  const wrapped = [];
  for await (const entry of a.addAll(files, { wrapWithDirectory: true })) wrapped.push(entry);
  const wrapper = wrapped.find((e) => e.path === '')!;
  const site = wrapped.find((e) => e.path === 'site')!;
  const aPins = await pinsOf(a);
  t.ok(aPins.includes(wrapper.cid.toString()), 'the wrapping directory is pinned');
  // kubo's default listing (type=all) names what the wrapper holds too, as indirect pins.
  const recursivePins: string[] = [];
  for await (const pin of a.pin.ls({ type: 'recursive' })) recursivePins.push(pin.cid.toString());
  t.notOk(recursivePins.includes(site.cid.toString()), 'what it holds is pinned through it, not on its own');
  for await (const pin of a.pin.ls({ paths: [site.cid] })) t.equal(pin.type, `indirect through ${wrapper.cid.toString()}`, 'kubo names the pin it is held through');

  let progressed = 0;
  const withProgress = await a.add(bytes('added with progress events\n'), { progress: () => void progressed++ });
  t.ok(progressed > 0, 'progress events came');
  t.ok((await pinsOf(a)).includes(withProgress.cid.toString()), 'an add with progress=true is recorded too');

  const upload = '--X\r\nContent-Disposition: form-data; name="file"; filename="one.txt"\r\nContent-Type: application/octet-stream\r\n\r\nfirst file\n\r\n'
    + '--X\r\nContent-Disposition: form-data; name="file"; filename="two.txt"\r\nContent-Type: application/octet-stream\r\n\r\nsecond file\n\r\n--X--\r\n';
  const res = await request(`${gw.api}/add?quieter=true`, { method: 'POST', headers: { authorization: basic(KEYS.a.key, KEYS.a.secret), 'content-type': 'multipart/form-data; boundary=X' }, body: upload });
  t.equal(res.statusCode, 200);
  const lines = (await res.body.text()).trimEnd().split('\n').map((l) => JSON.parse(l) as { Name: string; Hash: string });
  t.same(lines.map((l) => l.Name), ['two.txt'], 'quieter: the last entry only, as the client asked');
  const named = new Map<string, string | undefined>();
  for await (const pin of a.pin.ls({ names: true })) named.set(pin.cid.toString(), pin.name);
  t.equal(named.get(lines[0]!.Hash), 'two.txt', 'each top-level file is pinned, named by its path');
  t.equal([...named.values()].filter((n) => n === 'one.txt').length, 1, 'the one the answer left out too');
});

t.test('what block.put and dag.put pin, and dag.import\'s roots, are the caller\'s', async (t) => {
  const block = await a.block.put(bytes('a block pinned by A\n'), { pin: true });
  const unpinnedBlock = await a.block.put(bytes('a block nobody pins\n'));
  const node1 = await a.dag.put({ pinnedBy: 'A' }, { pin: true });
  const { car, leaf, leafCid, rootCid, rootBytes } = await leafAndRootCar(bytes('a leaf imported by A\n'), (leaf) => ({ leaf }));
  for await (const _ of a.dag.import([car])) { /* the roots, as the node reports them */ }

  const aPins = new Map<string, number>();
  for (const pin of (await adminGet('/keys/pins-a/pins')).body.pins as Array<{ cid: string; bytes: number }>) aPins.set(pin.cid, pin.bytes);
  t.equal(aPins.get(block.toString()), 20, 'block/put with pin: the block, its bytes');
  t.notOk(aPins.has(unpinnedBlock.toString()), 'block/put without pin records nothing');
  t.ok((aPins.get(node1.toString()) ?? 0) > 0, 'dag/put with pin: the node, weighed');
  t.equal(aPins.get(rootCid.toString()), rootBytes.length + leaf.length, 'dag/import: the root, weighed with what it links');
  const bPins = await pinsOf(b);
  t.notOk([block, node1, rootCid].some((c) => bPins.includes(c.toString())), 'none of it is B\'s');
  const nodePins = await pinsOf(node);
  t.ok([block, node1, rootCid].every((c) => nodePins.includes(c.toString())), 'the node pins them, as kubo does');
  t.notOk(nodePins.includes(unpinnedBlock.toString()), 'but not the block put without pin');
  await a.pin.rm(block);
  t.notOk((await pinsOf(node)).includes(block.toString()), 'A\'s pin.rm unpins it on the node');
});

t.test('pin.add, and B\'s pin.rm of A\'s CID leaves A\'s pin listed and its content readable', async (t) => {
  const { cid } = await a.add(bytes('kept by A\n'));
  t.same((await b.pin.add(cid)).toString(), cid.toString(), 'B pins the same content');
  t.ok((await pinsOf(b)).includes(cid.toString()));

  t.same((await b.pin.rm(cid)).toString(), cid.toString(), 'B removes its own pin');
  t.notOk((await pinsOf(b)).includes(cid.toString()), 'gone from B\'s list');
  t.ok((await pinsOf(a)).includes(cid.toString()), 'still in A\'s list');
  t.ok((await pinsOf(node)).includes(cid.toString()), 'the node still pins it: A does');
  t.equal(await catText(b, cid.toString()), 'kept by A\n', 'readable');

  await t.rejects(b.pin.rm(cid), { message: /not pinned/ }, 'B cannot remove A\'s pin');
  t.ok((await pinsOf(a)).includes(cid.toString()), 'A\'s pin stays after B\'s attempt');
  t.ok((await pinsOf(node)).includes(cid.toString()), 'and the node\'s');

  await a.pin.rm(cid);
  t.notOk((await pinsOf(a)).includes(cid.toString()), 'A removes it');
  t.notOk((await pinsOf(node)).includes(cid.toString()), 'no key pins it: the node unpins it');
});

t.test('pin.update moves the caller\'s pin only', async (t) => {
  const from = (await a.add(bytes('version 1\n'))).cid;
  const to = (await a.add(bytes('version 2\n'), { pin: false })).cid;
  t.notOk((await pinsOf(a)).includes(to.toString()), 'pin=false: not pinned');
  await b.pin.add(from);
  await t.rejects(b.pin.update(to, from), { message: /was not recursively pinned/ }, 'B cannot move a pin it does not hold');

  t.same((await a.pin.update(from, to)).map(String), [from.toString(), to.toString()]);
  const aPins = await pinsOf(a);
  t.ok(aPins.includes(to.toString()) && !aPins.includes(from.toString()), 'A\'s pin moved');
  t.ok((await pinsOf(b)).includes(from.toString()), 'B\'s pin of the old CID stays');
  const nodePins = await pinsOf(node);
  t.ok(nodePins.includes(from.toString()) && nodePins.includes(to.toString()), 'the node keeps the old content for B and pins the new');
});

t.test('an upload larger than what is left of the allowance is cut short, not stored whole', async (t) => {
  // 20 bytes pinned of 100: the upload may carry 80 bytes and the multipart framing allowance (1 MiB).
  const hello = await c.add(bytes('hello world\n'));
  const large = new Uint8Array(4 * 1024 * 1024).map((_, i) => (i * 7919) % 251);
  const root = (await node.add(large, { onlyHash: true })).cid;
  await t.rejects(c.add(large), { message: /^storage limit reached: the plan allows 100 bytes pinned, the key has 20$/ }, 'refused with the storage error');
  await t.rejects(node.block.stat(root), { message: /not found/ }, 'the node never got the whole file: its root block was never written');
  t.same(await pinsOf(c), [hello.cid.toString()], 'nothing recorded');
  const small = new Uint8Array(512 * 1024).map((_, i) => (i * 31) % 253);
  await t.rejects(c.add(small), { message: /^storage limit reached: the plan allows 100 bytes pinned, the key has 20, adding 524/ }, 'within the framing allowance the node takes it, and the exact weight refuses it');
  t.notOk((await pinsOf(node)).includes((await node.add(small, { onlyHash: true })).cid.toString()), 'and the node unpins it');
  await c.pin.rm(hello.cid);
});

t.test('a key past its plan\'s storageBytes is refused, and its stored bytes are shown', async (t) => {
  // "hello world\n" is one 20-byte block; 92 bytes of text make a 100-byte block.
  const hello = await c.add(bytes('hello world\n'));
  t.equal(hello.size, 20);
  const big = 'x'.repeat(92);
  await t.rejects(c.add(bytes(big)), { message: /storage limit reached/ }, 'add: 20 + 100 bytes pass the 100 allowed');
  const res = await request(`${gw.api}/add`, {
    method: 'POST',
    headers: { authorization: basic(KEYS.c.key, KEYS.c.secret), 'content-type': 'multipart/form-data; boundary=X' },
    body: `--X\r\nContent-Disposition: form-data; name="file"; filename="f"\r\nContent-Type: application/octet-stream\r\n\r\n${big}\r\n--X--\r\n`,
  });
  t.equal(res.statusCode, 402, 'HTTP 402');
  t.equal(res.headers['x-tollgate-error'], 'STORAGE_LIMIT_REACHED', 'the stable code');
  const body = (await res.body.json()) as { Message: string; Code: number; Type: string };
  t.match(body, { Message: /^storage limit reached: the plan allows 100 bytes pinned, the key has 20, adding 100$/, Code: 4, Type: 'error' }, 'kubo\'s error shape');

  t.same(await pinsOf(c), [hello.cid.toString()], 'nothing of the refused adds is the key\'s');
  const bigCid = (await node.add(bytes(big), { onlyHash: true })).cid.toString();
  t.notOk((await pinsOf(node)).includes(bigCid), 'nor pinned on the node');

  // With progress=true the answer has begun (200, progress events) when the add is weighed: the
  // refusal comes in the X-Stream-Error trailer, as kubo reports an error after its output began.
  const streamed = await request(`${gw.api}/add?progress=true`, {
    method: 'POST',
    headers: { authorization: basic(KEYS.c.key, KEYS.c.secret), 'content-type': 'multipart/form-data; boundary=X' },
    body: `--X\r\nContent-Disposition: form-data; name="file"; filename="f"\r\nContent-Type: application/octet-stream\r\n\r\n${big}\r\n--X--\r\n`,
  });
  t.equal(streamed.statusCode, 200);
  const events = (await streamed.body.text()).trimEnd().split('\n').map((l) => JSON.parse(l) as { Bytes?: number; Hash?: string });
  t.ok(events.length > 0 && events.every((e) => e.Bytes !== undefined && e.Hash === undefined), 'progress events only, no entry');
  t.match(streamed.trailers['x-stream-error'], /^storage limit reached: the plan allows 100 bytes pinned, the key has 20, adding 100$/, 'the refusal in the trailer');
  t.same(await pinsOf(c), [hello.cid.toString()], 'not recorded');

  const unpinned = await c.add(bytes(big), { pin: false });
  t.equal(unpinned.cid.toString(), bigCid);
  await t.rejects(c.pin.add(unpinned.cid), { message: /storage limit reached/ }, 'pin.add is refused too');

  const fits = await c.add(bytes('IPFS\n'));
  t.equal(fits.size, 13, 'what still fits is stored');
  const key = await adminGet('/keys/pins-c');
  t.equal(key.status, 200);
  t.same(key.body.storage, { bytes: 33, pins: 2, limitBytes: STARTER_BYTES }, 'the admin API shows the key\'s stored bytes, and its plan\'s allowance');
  const usage = await adminGet('/keys/pins-c/usage');
  t.equal(usage.status, 200);
  t.same(usage.body.storage, { bytes: 33, pins: 2, limitBytes: STARTER_BYTES }, 'its usage too');
  t.same((await adminGet('/keys/pins-idle/usage')).body.storage, { bytes: 0, pins: 0 }, 'a key that stores nothing shows 0, and no allowance on a plan without one');
  const pins = await adminGet('/keys/pins-c/pins');
  t.same((pins.body.pins as Array<{ cid: string; bytes: number }>).map((p) => [p.cid, p.bytes]), [[hello.cid.toString(), 20], [fits.cid.toString(), 13]]);

  await c.pin.rm(hello.cid);
  await c.pin.rm(fits.cid);
  t.same((await adminGet('/keys/pins-c')).body.storage, { bytes: 0, pins: 0, limitBytes: STARTER_BYTES }, 'removing pins frees their bytes');
  t.equal((await c.pin.add(unpinned.cid)).toString(), bigCid, 'the 100-byte DAG now fits, exactly');
  t.same((await adminGet('/keys/pins-c')).body.storage, { bytes: 100, pins: 1, limitBytes: STARTER_BYTES });
  await t.rejects(c.add(bytes('one more\n')), { message: /^storage limit reached: the plan allows 100 bytes pinned, the key has 100$/ }, 'a key at its allowance is refused before its upload is read');
  await t.rejects(c.add(bytes('one more\n'), { pin: false }), { message: /^storage limit reached/ }, 'an unpinned add too: a full key stores nothing more');
  await t.rejects(c.block.put(bytes('a block\n')), { message: /^storage limit reached/ }, 'nor a block');
  await t.rejects(c.dag.put({ hello: 'world' }), { message: /^storage limit reached/ }, 'nor a DAG node');
  t.ok((await c.add(bytes('one more\n'), { onlyHash: true })).cid, 'only-hash stores nothing: still served');
});
