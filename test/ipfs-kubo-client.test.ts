import t from 'tap';
import { createHash } from 'node:crypto';
import { create } from 'kubo-rpc-client';
import { request } from 'undici';
import { MemoryUsageRecorder, utcDay } from '../core/store-api.js';
import { Tokens } from '../core/plugin-api.js';
import { startIpfsGateway } from './helpers/ipfs-gateway.js';

// kubo-rpc-client, the JavaScript client of kubo's RPC, against the gateway's file-storage API with the
// embedded node behind it: what a real client sends must work, and the CIDs must be kubo's.

const gw = await startIpfsGateway();
t.teardown(() => gw.close());
const client = create({ url: gw.api, headers: { authorization: gw.auth } });

async function catAll(cid: string, options: { offset?: number; length?: number } = {}): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of client.cat(cid, options)) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** Deterministic, incompressible-looking bytes: a SHA-256 counter stream. */
function pseudoRandom(size: number, seed: string): Buffer {
  const out = Buffer.alloc(size);
  for (let offset = 0, n = 0; offset < size; offset += 32, n++) createHash('sha256').update(`${seed}:${n}`).digest().copy(out, offset);
  return out;
}

t.test('add gives kubo\'s CIDv0 for the notes\' known contents', async (t) => {
  const known: Array<[string, string, number]> = [
    ['hello world\n', 'QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o', 20],
    ['', 'QmbFMke1KXqnYyBBWxB74N4c5SBnJMVAiMNRcGu6x1AwQH', 6],
    ['Hello Mars', 'QmWkHFpYBZ9mpPRreRbMhhYWXfUhBAue3JkbbpFqwowSRb', 18],
    ['Hello Worlds!\n', 'QmVr26fY1tKyspEJBniVhqxQeEjhF78XerGiqWAwraVLQH', 22],
    ['IPFS\n', 'QmdFyxZXsFiP4csgfM5uPu99AvFiKH62CSPDw5TP92nr7w', 13],
  ];
  for (const [content, cid, size] of known) {
    const added = await client.add(new TextEncoder().encode(content));
    t.equal(added.cid.toString(), cid, JSON.stringify(content));
    t.equal(added.size, size, `${JSON.stringify(content)} size`);
    t.equal(added.path, cid, 'an unnamed file is named by its CID');
  }
});

t.test('cat returns the content, whole or a range by offset and length', async (t) => {
  const { cid } = await client.add(new TextEncoder().encode('Hello Worlds!\n'));
  t.equal((await catAll(cid.toString())).toString(), 'Hello Worlds!\n');
  t.equal((await catAll(cid.toString(), { offset: 6 })).toString(), 'Worlds!\n');
  t.equal((await catAll(cid.toString(), { offset: 6, length: 5 })).toString(), 'World');
  t.equal((await catAll(cid.toString(), { length: 0 })).toString(), '');
  t.equal((await catAll(cid.toString(), { offset: 100 })).toString(), '', 'an offset past the end gives nothing');
  t.equal((await catAll('/ipfs/QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o')).toString(), 'hello world\n', 'an /ipfs/ path works too');
});

t.test('version answers through the gateway', async (t) => {
  const version = await client.version();
  t.type(version.version, 'string');
  t.ok(version.version.length > 0);
});

t.test('a multi-chunk file round-trips byte for byte, and its root links its 256 KiB chunks', async (t) => {
  const size = 3 * 1024 * 1024 + 12_345;
  const content = pseudoRandom(size, 'multi-chunk');
  const added = await client.add(content);
  t.match(added.cid.toString(), /^Qm/, 'CIDv0 by default');
  const back = await catAll(added.cid.toString());
  t.equal(back.length, size);
  t.ok(back.equals(content), 'the same bytes');
  const middle = await catAll(added.cid.toString(), { offset: 262_144 - 10, length: 262_144 + 20 });
  t.ok(middle.equals(content.subarray(262_144 - 10, 2 * 262_144 + 10)), 'a range across chunk boundaries');

  const res = await request(`${gw.api}/object/get?arg=${added.cid.toString()}`, { method: 'POST', headers: { authorization: gw.auth } });
  const node = (await res.body.json()) as { Links: Array<{ Name: string; Hash: string; Size: number }>; Data: string };
  t.equal(node.Links.length, Math.ceil(size / 262_144), 'one link per chunk');
  t.ok(node.Links.every((l) => l.Name === '' && /^Qm/.test(l.Hash)), 'unnamed dag-pb leaves');
  t.equal(node.Links[0]!.Size, 262_144 + 14, 'a full leaf: 256 KiB of data and its UnixFS framing');
});

t.test('a directory: addAll with paths, and object/get lists its links', async (t) => {
  const files = [
    { path: 'docs/a.txt', content: new TextEncoder().encode('alpha\n') },
    { path: 'docs/b.txt', content: new TextEncoder().encode('beta\n') },
  ];
  const added = [];
  for await (const entry of client.addAll(files)) added.push(entry);
  const byPath = new Map(added.map((e) => [e.path, e.cid.toString()]));
  t.same([...byPath.keys()].sort(), ['docs', 'docs/a.txt', 'docs/b.txt']);

  const res = await request(`${gw.api}/object/get?arg=${byPath.get('docs')!}&encoding=json`, { method: 'POST', headers: { authorization: gw.auth } });
  t.equal(res.statusCode, 200);
  const node = (await res.body.json()) as { Links: Array<{ Name: string; Hash: string; Size: number }>; Data: string };
  t.same(node.Links.map((l) => [l.Name, l.Hash]), [['a.txt', byPath.get('docs/a.txt')], ['b.txt', byPath.get('docs/b.txt')]]);
  t.ok(node.Links.every((l) => l.Size > 0));
  t.equal(node.Data, '\b\u0001', 'UnixFS directory data');
  t.equal((await catAll(`${byPath.get('docs')!}/b.txt`)).toString(), 'beta\n', 'cat through a directory path');
});

t.test('bytes served are recorded per key', async (t) => {
  const usage = gw.gateway.container.resolve(Tokens.UsageRecorder) as MemoryUsageRecorder;
  const before = usage.usage('ipfs-test', utcDay(new Date()))['cat'] ?? { calls: 0, bytes: 0 };
  await catAll('QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o');
  // The stream's bytes are recorded when it ends, just after the client read the last byte.
  let after = before;
  for (let i = 0; i < 100 && after.bytes === before.bytes; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    after = usage.usage('ipfs-test', utcDay(new Date()))['cat'] ?? after;
  }
  t.equal(after.calls - before.calls, 1);
  t.equal(after.bytes - before.bytes, 12);
});

t.test('block.get returns a block\'s raw bytes, as the node stores them', async (t) => {
  const { cid } = await client.add(new TextEncoder().encode('hello world\n'));
  const block = Buffer.from(await client.block.get(cid));
  // kubo's CIDv0 leaf for "hello world\n": a dag-pb node holding a UnixFS file (20 bytes in all).
  t.equal(block.length, 20);
  t.ok(block.includes(Buffer.from('hello world\n')), 'the block holds the file\'s bytes');
});

t.test('block.stat gives a block\'s CID and size', async (t) => {
  const { cid } = await client.add(new TextEncoder().encode('hello world\n'));
  const stat = await client.block.stat(cid);
  t.equal(stat.cid.toString(), 'QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o');
  t.equal(stat.size, 20);
});
