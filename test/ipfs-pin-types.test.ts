import t from 'tap';
import { create, type KuboRPCClient } from 'kubo-rpc-client';
import { request } from 'undici';
import { basic, startIpfsGateway } from './helpers/ipfs-gateway.js';

// `pin/ls` by type, as kubo answers it, over a key's pins (all recursive): `recursive` lists them,
// `indirect` what their DAGs link, `all` (the default) both, `direct` nothing; asked by CID, a block inside
// one of the key's pins is `indirect through <that pin>`, and another key's pins never pin anything for it.

const KEYS = {
  a: { key: 'pin-types-key-a-0001', secret: 'pin-types-secret-a', id: 'pin-types-a', plan: 'growth' },
  b: { key: 'pin-types-key-b-0001', secret: 'pin-types-secret-b', id: 'pin-types-b', plan: 'growth' },
};

const gw = await startIpfsGateway({
  config: {
    keys: Object.values(KEYS),
    plugins: { ipfs: { secretChecksPerSourcePerSecond: 50, secretChecksPerSecond: 50 } },
  },
});
t.teardown(() => gw.close());

const clientOf = (key: { key: string; secret: string }): KuboRPCClient => create({ url: gw.api, headers: { authorization: basic(key.key, key.secret) } });
const a = clientOf(KEYS.a);
const b = clientOf(KEYS.b);
const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

async function listed(client: KuboRPCClient, options: Parameters<KuboRPCClient['pin']['ls']>[0] = {}): Promise<Map<string, string>> {
  const pins = new Map<string, string>();
  for await (const pin of client.pin.ls(options)) pins.set(pin.cid.toString(), pin.type);
  return pins;
}

// A wrapped directory: the wrapper is A's recursive pin; `site`, its two files, and the 3 leaves of the
// larger file (kubo's 256 KiB chunks) are pinned through it.
const big = new Uint8Array(600 * 1024).map((_, i) => (i * 7919) % 251);
const entries = [];
for await (const entry of a.addAll([
  { path: 'site/index.html', content: bytes('<h1>pin types</h1>\n') },
  { path: 'site/big.bin', content: big },
], { wrapWithDirectory: true })) entries.push(entry);
const wrapper = entries.find((e) => e.path === '')!.cid.toString();
const site = entries.find((e) => e.path === 'site')!.cid.toString();
const index = entries.find((e) => e.path === 'site/index.html')!.cid.toString();
const bigFile = entries.find((e) => e.path === 'site/big.bin')!.cid.toString();
const leaves = (await a.dag.get(entries.find((e) => e.path === 'site/big.bin')!.cid)).value as { Links: Array<{ Hash: { toString(): string } }> };
const leafCids = leaves.Links.map((l) => l.Hash.toString());

t.test('type=recursive lists the key\'s pins, type=indirect what they link, type=all both, type=direct nothing', async (t) => {
  t.equal(leafCids.length, 3, 'the large file has 3 leaves');
  const recursive = await listed(a, { type: 'recursive' });
  t.same([...recursive], [[wrapper, 'recursive']], 'recursive: the wrapping directory only');

  const indirect = await listed(a, { type: 'indirect' });
  t.same([...indirect.keys()].sort(), [site, index, bigFile, ...leafCids].sort(), 'indirect: every block under it, once, the root left out');
  t.ok([...indirect.values()].every((type) => type === 'indirect'), 'each typed indirect');

  const all = await listed(a);
  t.same(all, new Map([...recursive, ...indirect]), 'all (the default): recursive and indirect');
  t.same(await listed(a, { type: 'all' }), all, 'type=all is the default');

  t.same([...await listed(a, { type: 'direct' })], [], 'direct: none (the gateway pins recursively)');
});

t.test('asked by CID: recursive, indirect through the pin that holds it, or not pinned as the type asks', async (t) => {
  t.same([...await listed(a, { paths: [wrapper] })], [[wrapper, 'recursive']]);
  t.same([...await listed(a, { paths: [site, leafCids[2]!] })], [[site, `indirect through ${wrapper}`], [leafCids[2]!, `indirect through ${wrapper}`]], 'blocks inside the pin');
  t.same([...await listed(a, { paths: [index], type: 'indirect' })], [[index, `indirect through ${wrapper}`]]);
  const notPinned = (cid: string): { message: RegExp } => ({ message: new RegExp(`path '${cid}' is not pinned`) });
  await t.rejects(listed(a, { paths: [site], type: 'recursive' }), notPinned(site), 'an indirect pin is not recursive');
  await t.rejects(listed(a, { paths: [wrapper], type: 'indirect' }), notPinned(wrapper), 'a recursive pin is not indirect (kubo: recursive comes first)');
  await t.rejects(listed(a, { paths: [wrapper], type: 'direct' }), notPinned(wrapper), 'nor direct');
  await t.rejects(listed(a, { paths: [site], type: 'direct' }), notPinned(site));
});

t.test('another key\'s pins pin nothing for B, directly or indirectly', async (t) => {
  const own = await b.add(bytes('B\'s own file\n'));
  const bAll = await listed(b);
  t.same([...bAll], [[own.cid.toString(), 'recursive']], 'B lists its own pin, and nothing under A\'s');
  t.same([...await listed(b, { type: 'indirect' })], [], 'a single-block file links nothing');
  await t.rejects(listed(b, { paths: [site] }), { message: new RegExp(`path '${site}' is not pinned`) }, 'A\'s indirect pin is not B\'s');
});

t.test('the wire: kubo\'s Keys map and the NDJSON stream carry the types', async (t) => {
  const post = async (query: string): Promise<{ status: number; text: string }> => {
    const res = await request(`${gw.api}/pin/ls?${query}`, { method: 'POST', headers: { authorization: basic(KEYS.a.key, KEYS.a.secret) } });
    return { status: res.statusCode, text: await res.body.text() };
  };
  const keys = await post(`arg=${site}`);
  t.equal(keys.status, 200);
  t.same(JSON.parse(keys.text), { Keys: { [site]: { Type: `indirect through ${wrapper}` } } });
  const stream = await post('type=indirect&stream=true');
  t.equal(stream.status, 200);
  const lines = stream.text.trimEnd().split('\n').map((l) => JSON.parse(l) as { Cid: string; Type: string });
  t.same(lines.find((l) => l.Cid === site), { Cid: site, Type: 'indirect' });
  const refused = await post(`arg=${wrapper}&type=direct`);
  t.equal(refused.status, 500, 'kubo\'s status for a path that is not pinned');
  t.same(JSON.parse(refused.text), { Message: `path '${wrapper}' is not pinned`, Code: 0, Type: 'error' });
});

t.test('a direct pin is refused with a clear error: the gateway pins recursively only', async (t) => {
  await t.rejects(a.pin.add(index, { recursive: false }), { message: /direct pins are not offered: pin recursively \(recursive=true\)/ });
  t.same([...await listed(a, { type: 'direct' })], [], 'nothing was pinned directly');
  t.notOk((await listed(a, { type: 'recursive' })).has(index), 'nor recursively');
});
