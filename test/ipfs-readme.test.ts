import t from 'tap';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startExampleGateway } from './helpers/example-gateway.js';

// The README's file-storage examples, run as written (curl) against the bundled gateway's default
// configuration: the demo key and secret, the ipfs-devnet network, the embedded node.

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const section = readme.slice(readme.indexOf('### File storage (IPFS)'));
const [script, dagScript, pinScript] = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]);

t.test('the README shows the file-storage examples', async (t) => {
  t.ok(script, 'a sh block under "File storage (IPFS)"');
  t.match(script, /curl -s -u \$K:\$S -X POST -F file=@hello\.txt "\$I\/add"/);
  t.match(script, /\$I\/cat\?arg=/);
});

t.test('the README\'s curl examples work against the default configuration', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-ipfs-readme-'));
  const work = mkdtempSync(join(tmpdir(), 'tollgate-ipfs-readme-cwd-'));
  const gw = await startExampleGateway([], { plugins: { devnet: { helia: { dataDir } } } });
  t.teardown(async () => {
    await gw.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });
  const { stdout } = await promisify(execFile)('sh', ['-ec', script!.replaceAll('http://127.0.0.1:8545', gw.origin)], { cwd: work });
  const lines = stdout.split('\n');
  t.same(JSON.parse(lines[0]!), { Name: 'hello.txt', Hash: 'QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o', Size: '20' }, 'add');
  t.equal(lines[1], 'hello world', 'cat');
  t.match(lines[2], /^world/, 'cat with offset and length');
  t.equal(lines[2]!.slice(0, 5), 'world');
  t.same(JSON.parse(lines[2]!.slice(5)), { Links: [], Data: 'CAISDGhlbGxvIHdvcmxkChgM' }, 'object/get with base64 data');
  t.match(JSON.parse(lines[3]!), { Version: String }, 'version');

  // The block, DAG and archive examples, after the first block (they read what its add stored).
  t.ok(dagScript, 'a second sh block: blocks, IPLD nodes and archives');
  const dag = (await promisify(execFile)('sh', ['-ec', dagScript!.replaceAll('http://127.0.0.1:8545', gw.origin).replace(/^/, `K=tollgate-demo-key-0001; S=tollgate-demo-secret-0001; I=${gw.origin}/ipfs-devnet/api/v0\n`)], { cwd: work })).stdout.split('\n');
  t.same(JSON.parse(dag[0]!), { Key: 'bafkreifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4', Size: 12 }, 'block/put: kubo\'s CIDv1 raw');
  t.same(JSON.parse(dag[1]!), { Cid: { '/': 'bafyreie7d3a65h5igknekr3ru6pxik4cbudzuytknsub5s35r4qtugba3u' } }, 'dag/put: the CID the README names');
  t.equal(dag[2], '"hello"', 'dag/get of a path inside the node');
  t.same(JSON.parse(dag[3]!), { Cid: { '/': 'QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o' }, RemPath: '' }, 'dag/resolve through the link');
  t.same(JSON.parse(dag[4]!), { Name: '', Hash: 'QmfLiVjH2vujCVP2e75zyzBYmpcjktmDeU1YBz6Ct8BBsc', Size: '75' }, 'the wrapping directory the README names');
  t.same(dag.slice(5, 7), ['QmfLiVjH2vujCVP2e75zyzBYmpcjktmDeU1YBz6Ct8BBsc', 'QmfLiVjH2vujCVP2e75zyzBYmpcjktmDeU1YBz6Ct8BBsc/hello.txt'], 'get: the tar\'s entries');

  // Pins and the Pinning Service API, after the DAG block (they pin what it stored).
  t.ok(pinScript, 'a third sh block: pins and the Pinning Service API');
  const pins = (await promisify(execFile)('sh', ['-ec', pinScript!.replaceAll('http://127.0.0.1:8545', gw.origin).replace(/^/, `K=tollgate-demo-key-0001; S=tollgate-demo-secret-0001; I=${gw.origin}/ipfs-devnet/api/v0\n`)], { cwd: work })).stdout.split('\n');
  t.same(JSON.parse(pins[0]!), { Keys: { QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o: { Type: 'recursive' } } }, 'pin/ls: what add pinned is the key\'s');
  t.same(JSON.parse(pins[1]!), { Pins: ['bafyreie7d3a65h5igknekr3ru6pxik4cbudzuytknsub5s35r4qtugba3u'] }, 'pin/add');
  t.same(JSON.parse(pins[2]!), { Pins: ['bafyreie7d3a65h5igknekr3ru6pxik4cbudzuytknsub5s35r4qtugba3u'] }, 'pin/rm');
  t.match(JSON.parse(pins[3]!), { requestid: String, status: 'queued', pin: { cid: 'bafkreifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4', name: 'hello-block' } }, 'a pin request, queued');
  t.match(JSON.parse(pins[4]!), { count: 1, results: [{ pin: { name: 'hello-block' } }] }, 'the key\'s pins by name');
});
