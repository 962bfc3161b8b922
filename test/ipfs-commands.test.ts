import t from 'tap';
import * as dagCbor from '@ipld/dag-cbor';
import { create } from 'kubo-rpc-client';
import { CID } from 'multiformats/cid';
import * as raw from 'multiformats/codecs/raw';
import { sha256 } from 'multiformats/hashes/sha2';
import { Parser, type ReadEntry } from 'tar';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { Tokens } from '../core/plugin-api.js';
import { MemoryUsageRecorder, utcDay, type UsageTotals } from '../core/store-api.js';
import { startIpfsGateway } from './helpers/ipfs-gateway.js';
import { until } from './helpers/until.js';
import { carOf, cborNode, leafAndRootCar, rawCid } from './helpers/car.js';

// kubo-rpc-client against the gateway's file-storage API with the devnet node behind it, for the
// commands beyond add and cat: block/put, dag/put|get|resolve|import, get and version. CIDs must be
// kubo's defaults for the same input, and each call is charged its price and metered by bytes.

const gw = await startIpfsGateway();
t.teardown(() => gw.close());
const client = create({ url: gw.api, headers: { authorization: gw.auth } });
const usage = gw.gateway.container.resolve(Tokens.UsageRecorder) as MemoryUsageRecorder;

/** The prices of the commands, as the file-storage guide lists them. */
const PRICES: Readonly<Record<string, number>> = { 'block/put': 40, 'block/get': 0, 'block/stat': 0, 'dag/put': 40, 'dag/get': 20, 'dag/resolve': 20, 'dag/import': 80, get: 40, version: 10 };

function totals(method: string): UsageTotals {
  return usage.usage('ipfs-test', utcDay(new Date()))[method] ?? { calls: 0, credits: 0, bytes: 0, failed: 0 };
}

/** Runs `call` and returns what it added to the key's usage of `method` (a streamed call is recorded once its stream ended). */
async function metered<T>(method: string, call: () => Promise<T>): Promise<{ result: T; calls: number; credits: number; bytes: number }> {
  const before = totals(method);
  const result = await call();
  await until(`the ${method} call was recorded`, () => totals(method).calls > before.calls);
  const after = totals(method);
  return { result, calls: after.calls - before.calls, credits: after.credits - before.credits, bytes: after.bytes - before.bytes };
}

function multipart(parts: readonly Uint8Array[]): { body: Buffer; contentType: string } {
  const boundary = '----tollgate-test-boundary';
  const chunks: Buffer[] = [];
  parts.forEach((part, i) => {
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file${i === 0 ? '' : `-${i}`}"; filename=""\r\nContent-Type: application/octet-stream\r\n\r\n`));
    chunks.push(Buffer.from(part), Buffer.from('\r\n'));
  });
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

async function post(path: string, upload?: readonly Uint8Array[]): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const form = upload === undefined ? undefined : multipart(upload);
  const res = await request(`${gw.api}/${path}`, {
    method: 'POST',
    headers: { authorization: gw.auth, ...(form === undefined ? {} : { 'content-type': form.contentType }) },
    ...(form === undefined ? {} : { body: form.body }),
  });
  return { status: res.statusCode, headers: res.headers, body: await res.body.text() };
}

const text = (s: string): Uint8Array => new TextEncoder().encode(s);

t.test('block.put stores raw bytes under kubo\'s default CIDv1 raw sha2-256; block.get and block.stat read them back', async (t) => {
  const bytes = text('hello world\n');
  const put = await metered('block/put', () => client.block.put(bytes));
  // kubo's `ipfs block put` of "hello world\n" (cid-codec raw, mhtype sha2-256, CIDv1).
  t.equal(put.result.toString(), 'bafkreifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4');
  t.equal(put.result.toString(), CID.createV1(raw.code, await sha256.digest(bytes)).toString(), 'the CID of the bytes');
  t.same([put.calls, put.credits], [1, PRICES['block/put']], 'one call at its price');
  t.ok(put.bytes > bytes.length, 'the upload and the answer are metered');

  const got = await metered('block/get', () => client.block.get(put.result));
  t.same(Buffer.from(got.result), Buffer.from(bytes));
  t.same([got.calls, got.credits, got.bytes], [1, PRICES['block/get'], bytes.length], 'metered by the bytes served');

  const stat = await metered('block/stat', () => client.block.stat(put.result));
  t.equal(stat.result.cid.toString(), put.result.toString());
  t.equal(stat.result.size, bytes.length);

  // A codec only labels the bytes: a dag-cbor block keeps its bytes, under a dag-cbor CID, whether
  // asked by `cid-codec` or by the client's (deprecated) `format`; `format=v0` gives a CIDv0.
  const node = dagCbor.encode({ labelled: true });
  const expected = CID.createV1(dagCbor.code, await sha256.digest(node)).toString();
  t.equal((await client.block.put(node, { format: 'dag-cbor' })).toString(), expected);
  const codec = await post('block/put?cid-codec=dag-cbor', [node]);
  t.same(JSON.parse(codec.body), { Key: expected, Size: node.length });
  t.equal((await client.block.put(node, { format: 'v0' })).toString(), CID.createV0(await sha256.digest(node)).toString());

  // The wire answer: NDJSON {"Key","Size"} per block, as kubo streams it.
  const wire = await post('block/put', [text('one'), text('two')]);
  t.equal(wire.status, 200);
  t.equal(wire.headers['x-chunked-output'], '1');
  const lines = wire.body.trim().split('\n').map((line) => JSON.parse(line) as { Key: string; Size: number });
  t.same(lines.map((l) => l.Size), [3, 3]);
  t.equal(lines[0]!.Key, CID.createV1(raw.code, await sha256.digest(text('one'))).toString());
});

t.test('block/put refuses a block over 2 MiB unless allow-big-block, as kubo', async (t) => {
  const big = new Uint8Array(2 * 1024 * 1024 + 1).fill(7);
  await t.rejects(client.block.put(big), /produced block is over 2MiB/);
  const allowed = await client.block.put(big, { allowBigBlock: true });
  t.equal(allowed.toString(), CID.createV1(raw.code, await sha256.digest(big)).toString());
});

t.test('dag.put, dag.get and dag.resolve: dag-cbor CIDv1 by default, paths through links', async (t) => {
  const put = await metered('dag/put', () => client.dag.put({ hello: 'world' }));
  // The CID kubo gives {"hello":"world"} with `ipfs dag put` (dag-json in, dag-cbor stored, sha2-256).
  t.equal(put.result.toString(), 'bafyreidykglsfhoixmivffc5uwhcgshx4j465xwqntbmu43nb2dzqwfvae');
  t.equal(put.result.toString(), CID.createV1(dagCbor.code, await sha256.digest(dagCbor.encode({ hello: 'world' }))).toString());
  t.same([put.calls, put.credits], [1, PRICES['dag/put']]);
  t.ok(put.bytes > 0, 'metered by bytes');

  // kubo's wire defaults: a dag-json body with no codec flags is stored as dag-cbor.
  const wire = await post('dag/put', [text('{"hello":"world"}')]);
  t.equal(wire.status, 200);
  t.equal(wire.headers['x-chunked-output'], '1');
  t.same(JSON.parse(wire.body), { Cid: { '/': put.result.toString() } });

  const parent = await client.dag.put({ a: { b: put.result }, list: [1, 2, 3] });
  const resolved = await metered('dag/resolve', () => client.dag.resolve(parent, { path: 'a/b/hello' }));
  t.equal(resolved.result.cid.toString(), put.result.toString(), 'the last block reached through a link');
  t.equal(resolved.result.remainderPath, 'hello', 'and the rest of the path inside it');
  t.same([resolved.calls, resolved.credits], [1, PRICES['dag/resolve']]);
  const inside = await client.dag.resolve(parent, { path: 'list/1' });
  t.same([inside.cid.toString(), inside.remainderPath], [parent.toString(), 'list/1'], 'a path inside one block stays there');

  const got = await client.dag.get(parent, { path: 'a/b' });
  t.same(got.value, { hello: 'world' });

  const http = await metered('dag/get', () => post(`dag/get?arg=${parent.toString()}/list`));
  t.equal(http.result.status, 200);
  t.equal(http.result.headers['x-stream-output'], '1');
  t.equal(http.result.body, '[1,2,3]', 'dag-json by default');
  t.same([http.calls, http.credits, http.bytes], [1, PRICES['dag/get'], 7]);
  const missing = await post(`dag/resolve?arg=${parent.toString()}/nope`);
  t.equal(missing.status, 500);
  t.same(JSON.parse(missing.body), { Message: `no link named "nope" under ${parent.toString()}`, Code: 0, Type: 'error' });
});

t.test('dag.import takes a CAR built with @ipld/car: its blocks are readable, its root reported', async (t) => {
  const { car, leaf, leafCid, rootCid, rootBytes } = await leafAndRootCar(text('a leaf of the imported DAG\n'), (leaf) => ({ name: 'imported', leaf }));

  const imported = await metered('dag/import', async () => {
    const results = [];
    for await (const result of client.dag.import([car])) results.push(result);
    return results;
  });
  t.same(imported.result.map((r) => [r.root.cid.toString(), r.root.pinErrorMsg]), [[rootCid.toString(), '']], 'the header\'s root, whole');
  t.same([imported.calls, imported.credits], [1, PRICES['dag/import']]);
  t.ok(imported.bytes >= car.length, 'the CAR\'s bytes are metered');
  t.same(Buffer.from(await client.block.get(leafCid)), Buffer.from(leaf));
  t.same((await client.dag.get(rootCid)).value, { name: 'imported', leaf: leafCid });

  const stats = await post('dag/import?pin-roots=false&stats=true', [car]);
  t.equal(stats.status, 200);
  t.same(JSON.parse(stats.body), { Stats: { BlockCount: 2, BlockBytesCount: rootBytes.length + leaf.length } });

  // A CAR whose root's DAG is not whole: kubo reports the pin failure on the root.
  const orphanLeaf = await rawCid(text('never imported'));
  const orphanNode = await cborNode({ leaf: orphanLeaf });
  const orphanRoot = orphanNode.cid;
  const orphan = [];
  for await (const result of client.dag.import([await carOf([orphanRoot], [orphanNode])])) orphan.push(result);
  t.equal(orphan.length, 1);
  t.equal(orphan[0]!.root.cid.toString(), orphanRoot.toString());
  t.match(orphan[0]!.root.pinErrorMsg, orphanLeaf.toString(), 'the missing block is named');

  const tampered = Buffer.from(car);
  tampered[tampered.length - 1] = tampered[tampered.length - 1]! ^ 0xff;
  const refused = await post('dag/import', [tampered]);
  t.equal(refused.status, 500);
  t.match(JSON.parse(refused.body), { Message: new RegExp(`^import failed at block "${leafCid.toString()}"`), Code: 0, Type: 'error' });
});

t.test('get streams a wrapped directory as a tar with the entries as added', async (t) => {
  const files = [
    { path: 'site/index.html', content: text('<h1>hello</h1>\n') },
    { path: 'site/css/style.css', content: text('h1 { color: red }\n') },
    { path: 'site/notes.txt', content: text('notes\n') },
  ];
  let root: CID | undefined;
  for await (const entry of client.addAll(files, { wrapWithDirectory: true })) root = entry.cid;
  const name = root!.toString();

  const fetched = await metered('get', async () => {
    const chunks: Uint8Array[] = [];
    for await (const chunk of client.get(root!)) chunks.push(chunk);
    return Buffer.concat(chunks);
  });
  t.same([fetched.calls, fetched.credits, fetched.bytes], [1, PRICES['get'], fetched.result.length], 'one call at its price, metered by the tar\'s bytes');

  const entries: Array<{ path: string; type: string; content: string }> = [];
  await new Promise<void>((resolve, reject) => {
    const parser = new Parser();
    parser.on('entry', (entry: ReadEntry) => {
      const chunks: Buffer[] = [];
      entry.on('data', (chunk: Buffer) => chunks.push(chunk));
      entry.on('end', () => entries.push({ path: entry.path, type: entry.type, content: Buffer.concat(chunks).toString() }));
    });
    parser.on('end', resolve);
    parser.on('error', reject);
    parser.end(fetched.result);
  });
  t.same(entries, [
    { path: name, type: 'Directory', content: '' },
    { path: `${name}/site`, type: 'Directory', content: '' },
    { path: `${name}/site/css`, type: 'Directory', content: '' },
    { path: `${name}/site/css/style.css`, type: 'File', content: 'h1 { color: red }\n' },
    { path: `${name}/site/index.html`, type: 'File', content: '<h1>hello</h1>\n' },
    { path: `${name}/site/notes.txt`, type: 'File', content: 'notes\n' },
  ], 'the wrapping directory named by its CID, then every entry depth first in link order');
  t.notOk(entries.some((e) => e.path.endsWith('/')), 'directory names without a trailing slash, as kubo writes them');

  const wire = await post(`get?arg=/ipfs/${name}/site/notes.txt`);
  t.equal(wire.status, 200);
  t.equal(wire.headers['content-type'], 'application/x-tar');
  t.equal(wire.headers['x-content-length'], '6', 'a file\'s size');
  t.equal(wire.body.slice(0, 9), 'notes.txt', 'a file is named after the path\'s last part');
});

t.test('get that fails after its tar began: 200, then the error in the X-Stream-Error trailer', async (t) => {
  const files = [
    { path: 'broken/first.txt', content: text('first\n') },
    { path: 'broken/second.txt', content: text('second\n') },
  ];
  const added = new Map<string, CID>();
  for await (const entry of client.addAll(files)) added.set(entry.path, entry.cid);
  // The node loses the second file's block: the tar has begun by the time it is needed.
  await gw.devnet.helia.instance()!.node.blockstore.delete(added.get('broken/second.txt')!);
  const res = await request(`${gw.api}/get?arg=${added.get('broken')!.toString()}`, { method: 'POST', headers: { authorization: gw.auth } });
  t.equal(res.statusCode, 200);
  t.equal(res.headers.trailer, 'X-Stream-Error');
  const tar = Buffer.from(await res.body.arrayBuffer());
  t.ok(tar.includes(Buffer.from('first\n')), 'the entries before the failure were sent');
  t.match(res.trailers['x-stream-error'], /not found/, 'the failure is in the trailer');
});

t.test('version is charged its price', async (t) => {
  const version = await metered('version', () => client.version());
  t.equal(version.result.version, 'tollgate-devnet-helia');
  t.same([version.calls, version.credits], [1, PRICES['version']]);
});

t.test('uploads are bounded by maxUploadBytes and maxBlocksPerUpload, and prices follow plugins.ipfs.credits', async (t) => {
  const small = await startIpfsGateway({ ipfs: { maxUploadBytes: 64 * 1024, maxBlocksPerUpload: 3, credits: { 'block/put': 7, cat: 3 } } });
  t.teardown(() => small.close());
  const smallClient = create({ url: small.api, headers: { authorization: small.auth } });
  const smallUsage = small.gateway.container.resolve(Tokens.UsageRecorder) as MemoryUsageRecorder;
  const of = (method: string): UsageTotals | undefined => smallUsage.usage('ipfs-test', utcDay(new Date()))[method];

  const cid = await smallClient.block.put(text('priced'));
  await until('the block/put was recorded', () => of('block/put')?.calls === 1);
  t.equal(of('block/put')?.credits, 7, 'the configured price');
  const chunks: Uint8Array[] = [];
  for await (const chunk of smallClient.cat(cid)) chunks.push(chunk);
  await until('the cat was recorded', () => of('cat')?.calls === 1);
  t.equal(of('cat')?.credits, 3, 'a command free by default can be priced');

  // A declared length over the bound is refused before anything is read.
  const body = multipart([new Uint8Array(100 * 1024)]);
  const declared = await request(`${small.api}/block/put`, { method: 'POST', headers: { authorization: small.auth, 'content-type': body.contentType }, body: body.body });
  t.equal(declared.statusCode, 413);
  t.same(await declared.body.json(), { Message: `the upload exceeds ${64 * 1024} bytes (maxUploadBytes)`, Code: 1, Type: 'error' });

  // A streamed upload (kubo-rpc-client sends no length) is cut once it passes the bound.
  await t.rejects(async () => {
    for await (const _ of smallClient.dag.import([new Uint8Array(200 * 1024)])) t.fail('no root of a cut upload');
  }, /the upload exceeds 65536 bytes/);
  t.equal((await smallClient.version()).version, 'tollgate-devnet-helia', 'the gateway serves on');

  // Blocks per upload: the CAR sections of a dag/import, the parts of a block/put, counted as they stream.
  const blocks = await Promise.all(['one', 'two', 'three', 'four'].map(async (word) => ({ cid: await rawCid(text(word)), bytes: text(word) })));
  const threeRoots: unknown[] = [];
  for await (const root of smallClient.dag.import([await carOf([blocks[0]!.cid], blocks.slice(0, 3))])) threeRoots.push(root);
  t.same(threeRoots, [{ root: { cid: blocks[0]!.cid, pinErrorMsg: '' } }], 'a CAR of 3 blocks is imported');
  await t.rejects(async () => {
    for await (const _ of smallClient.dag.import([await carOf([blocks[3]!.cid], blocks)])) t.fail('no root of a cut upload');
  }, /the upload holds more than 3 blocks \(maxBlocksPerUpload\)/, 'a CAR of 4 blocks is cut');
  const fourParts = await request(`${small.api}/block/put`, { method: 'POST', headers: { authorization: small.auth, 'content-type': multipart(blocks.map((b) => b.bytes)).contentType }, body: Readable.from([multipart(blocks.map((b) => b.bytes)).body]) });
  t.equal(fourParts.statusCode, 413, 'a block/put of 4 parts is cut');
  t.same(await fourParts.body.json(), { Message: 'the upload holds more than 3 blocks (maxBlocksPerUpload)', Code: 1, Type: 'error' });
  const threeParts = multipart(blocks.slice(0, 3).map((b) => b.bytes));
  const stored = await request(`${small.api}/block/put`, { method: 'POST', headers: { authorization: small.auth, 'content-type': threeParts.contentType }, body: threeParts.body });
  t.equal(stored.statusCode, 200, 'a block/put of 3 parts is stored');
  t.same((await stored.body.text()).trim().split('\n').map((line) => (JSON.parse(line) as { Key: string }).Key), blocks.slice(0, 3).map((b) => b.cid.toString()));
});
