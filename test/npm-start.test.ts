import t from 'tap';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import * as dagCbor from '@ipld/dag-cbor';
import { create } from 'kubo-rpc-client';
import { CID } from 'multiformats/cid';
import * as raw from 'multiformats/codecs/raw';
import { sha256 } from 'multiformats/hashes/sha2';
import { Parser, type ReadEntry } from 'tar';
import { createPublicClient, http, webSocket } from 'viem';
import { DEMO_API_KEY, DEMO_API_SECRET } from '../examples/gateway/default-config.js';
import { startServing } from './helpers/example-process.js';
import { leafAndRootCar } from './helpers/car.js';

// `npm start` in the repository: the build (prestart), then the compiled `tollgate demo`. The test runs
// the same two steps itself rather than through npm, so that stopping it stops the gateway.
const root = fileURLToPath(new URL('..', import.meta.url));
const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
t.equal(scripts.prestart, 'npm run build --silent', 'npm start builds first');
t.equal(scripts.start, 'node dist/examples/gateway/main.js demo', 'npm start runs the compiled demo');
await promisify(execFile)('npm', ['run', 'build', '--silent'], { cwd: root });
const dataDir = await mkdtemp(join(tmpdir(), 'tollgate-npm-start-'));
const ex = await startServing('npm start', root, process.execPath, ['dist/examples/gateway/main.js', 'demo'], { TOLLGATE_DATA_DIR: dataDir, PORT: '0' });
t.teardown(async () => {
  if (ex.child.exitCode === null) ex.child.kill('SIGKILL');
  await rm(dataDir, { recursive: true, force: true });
});
const eth = `${ex.origin}/eth-devnet/v3/${DEMO_API_KEY}`;

t.test('viem over HTTP and WebSocket', async (t) => {
  const overHttp = createPublicClient({ transport: http(eth, { retryCount: 0 }) });
  t.equal(await overHttp.getChainId(), 31337);
  const block = await overHttp.getBlockNumber();
  t.ok(block > 0n, 'the seeded chain has blocks');
  const transport = webSocket(`ws${ex.origin.slice(4)}/eth-devnet/ws/v3/${DEMO_API_KEY}`, { retryCount: 0, reconnect: false, keepAlive: false });
  const overWs = createPublicClient({ transport });
  t.equal(await overWs.getBlockNumber(), await overHttp.getBlockNumber());
  t.equal(await overWs.getBalance({ address: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' }), await overHttp.getBalance({ address: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' }));
  const { socket } = await transport({}).value!.getRpcClient();
  socket.close();
});

t.test('curl-level calls: Solana, file storage, a bad key', async (t) => {
  const solana = await fetch(`${ex.origin}/solana-devnet/v3/${DEMO_API_KEY}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getAccountInfo', params: ['TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA', { encoding: 'base64' }] }),
  });
  t.equal(solana.status, 200);
  const account = (await solana.json()) as { result: { value: { executable: boolean } } };
  t.equal(account.result.value.executable, true, 'the token program account');

  const auth = `Basic ${Buffer.from(`${DEMO_API_KEY}:${DEMO_API_SECRET}`).toString('base64')}`;
  const version = await fetch(`${ex.origin}/ipfs-devnet/api/v0/version`, { method: 'POST', headers: { authorization: auth } });
  t.equal(version.status, 200);
  t.match(await version.json(), { Version: String });
  // kubo-rpc-client against the compiled demo: a block, a DAG node, a path through it, a tar.
  const files = create({ url: `${ex.origin}/ipfs-devnet/api/v0`, headers: { authorization: auth } });
  t.equal((await files.block.put(new TextEncoder().encode('hello world\n'))).toString(), 'bafkreifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4');
  const node = await files.dag.put({ hello: 'world' });
  t.equal(node.toString(), 'bafyreidykglsfhoixmivffc5uwhcgshx4j465xwqntbmu43nb2dzqwfvae');
  t.same((await files.dag.resolve(node, { path: 'hello' })).remainderPath, 'hello');
  const tar: Uint8Array[] = [];
  for await (const chunk of files.get('bafkreifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4')) tar.push(chunk);
  t.ok(Buffer.concat(tar).includes(Buffer.from('hello world\n')), 'get: the block as a file in a tar');

  const bad = await fetch(`${ex.origin}/eth-devnet/v3/not-a-valid-key`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}' });
  t.equal(bad.status, 401);
  t.same(await bad.json(), { jsonrpc: '2.0', id: 1, error: { code: -33001, message: 'Invalid API key' } });
});

t.test('kubo-rpc-client: the file API a storage customer uses, with kubo\'s CIDs', async (t) => {
  const auth = `Basic ${Buffer.from(`${DEMO_API_KEY}:${DEMO_API_SECRET}`).toString('base64')}`;
  const files = create({ url: `${ex.origin}/ipfs-devnet/api/v0`, headers: { authorization: auth } });
  const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);
  t.match(await files.version(), { version: String }, 'version');

  const block = await files.block.put(bytes('a block of the demo\n'));
  t.equal(block.toString(), CID.createV1(raw.code, await sha256.digest(bytes('a block of the demo\n'))).toString(), 'block.put: CIDv1 raw, sha2-256');
  t.equal(Buffer.from(await files.block.get(block)).toString(), 'a block of the demo\n', 'block.get');
  t.same(await files.block.stat(block), { cid: block, size: 20 }, 'block.stat');

  const node = await files.dag.put({ name: 'demo', block });
  t.equal(node.toString(), CID.createV1(dagCbor.code, await sha256.digest(dagCbor.encode({ name: 'demo', block }))).toString(), 'dag.put: dag-cbor, CIDv1');
  t.same((await files.dag.get(node, { path: 'name' })).value, 'demo', 'dag.get of a path');
  t.same((await files.dag.resolve(node, { path: 'block' })).cid.toString(), block.toString(), 'dag.resolve through the link');

  const { car, leafCid, rootCid } = await leafAndRootCar(bytes('a leaf of an imported DAG\n'), (leaf) => ({ imported: true, leaf }));
  const imported = [];
  for await (const result of files.dag.import([car])) imported.push(result);
  t.same(imported.map((r) => r.root.cid.toString()), [rootCid.toString()], 'dag.import of a CAR: its root');
  t.equal(Buffer.from(await files.block.get(leafCid)).toString(), 'a leaf of an imported DAG\n', 'its blocks readable');

  t.same((await files.pin.add(node)).toString(), node.toString(), 'pin.add');
  const pinned = [];
  for await (const pin of files.pin.ls({ paths: [node] })) pinned.push(pin.cid.toString());
  t.same(pinned, [node.toString()], 'pin.ls');
  const moved = await files.pin.update(node, rootCid);
  t.same(moved.map(String), [node.toString(), rootCid.toString()], 'pin.update from the node to the imported root');
  t.equal((await files.pin.rm(rootCid)).toString(), rootCid.toString(), 'pin.rm');

  let root: CID | undefined;
  for await (const entry of files.addAll([{ path: 'site/index.html', content: bytes('<h1>demo</h1>\n') }, { path: 'site/notes.txt', content: bytes('notes\n') }], { wrapWithDirectory: true })) root = entry.cid;
  const tar: Uint8Array[] = [];
  for await (const chunk of files.get(root!)) tar.push(chunk);
  const entries: string[] = [];
  await new Promise<void>((resolve, reject) => {
    const parser = new Parser();
    parser.on('entry', (entry: ReadEntry) => { entries.push(`${entry.type} ${entry.path}`); entry.resume(); });
    parser.on('end', resolve);
    parser.on('error', reject);
    parser.end(Buffer.concat(tar));
  });
  const name = root!.toString();
  t.same(entries, [`Directory ${name}`, `Directory ${name}/site`, `File ${name}/site/index.html`, `File ${name}/site/notes.txt`], 'get of a wrapped directory: the tar\'s entries as added');
});

t.test('SIGTERM stops it cleanly', async (t) => {
  t.equal(await ex.stop(), 0);
});
