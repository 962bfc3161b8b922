import t from 'tap';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { create } from 'kubo-rpc-client';
import { createPublicClient, http, webSocket } from 'viem';
import { DEMO_API_KEY, DEMO_API_SECRET } from '../examples/gateway/default-config.js';
import { startServing } from './helpers/example-process.js';

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

t.test('SIGTERM stops it cleanly', async (t) => {
  t.equal(await ex.stop(), 0);
});
