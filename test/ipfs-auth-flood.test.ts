/**
 * A flood of made-up keys cannot starve the file API: every refusal's scrypt check is bounded by the
 * refusal budget (per source address and overall) and runs on the plugin's checker thread, off the
 * thread pool the embedded file node reads blocks on. The gateway runs in a process of its own; 64
 * clients, each from its own loopback address, send made-up keys without pause while a `cat` of 2 MiB is
 * read in full seven times (starved, it used to fail with HTTP 500 after 30 s); its time beside the
 * unloaded time is printed.
 */
import t from 'tap';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { TSX_NODE_ARGS } from './helpers/tsx-node-args.js';
import { basic } from './helpers/ipfs-gateway.js';

const KEY = 'ipfs-child-key-0001';
const SECRET = 'ipfs-child-secret';
const FLOODERS = 64;
const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-ipfs-flood-'));
t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
const child = spawn(process.execPath, [...TSX_NODE_ARGS, fileURLToPath(new URL('./helpers/ipfs-gateway-child.ts', import.meta.url)), 'embedded', dataDir], { stdio: ['pipe', 'pipe', 'inherit'] });
const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
t.teardown(async () => { child.kill('SIGKILL'); await exited; });
const port = await new Promise<number>((resolve, reject) => {
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    const ready = /READY (\d+)/.exec(out);
    if (ready !== null) resolve(Number(ready[1]));
  });
  child.once('exit', (code) => reject(new Error(`the gateway exited with ${code}`)));
});
const api = `http://127.0.0.1:${port}/ipfs/api/v0`;

const content = randomBytes(2 * 1024 * 1024);
const boundary = '----tollgate-flood-boundary';
const upload = Buffer.concat([
  Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="blob"\r\nContent-Type: application/octet-stream\r\n\r\n`),
  content,
  Buffer.from(`\r\n--${boundary}--\r\n`),
]);
const added = await request(`${api}/add`, { method: 'POST', body: upload, headers: { authorization: basic(KEY, SECRET), 'content-type': `multipart/form-data; boundary=${boundary}` } });
const cid = (JSON.parse((await added.body.text()).trim().split('\n').at(-1)!) as { Hash: string }).Hash;
const digest = createHash('sha256').update(content).digest('hex');

/** One `cat` of the file with the real key: its time in ms, after checking every byte came back. */
async function timedCat(): Promise<number> {
  const started = process.hrtime.bigint();
  const res = await request(`${api}/cat?arg=${cid}`, { method: 'POST', headers: { authorization: basic(KEY, SECRET) } });
  const body = Buffer.from(await res.body.arrayBuffer());
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (res.statusCode !== 200 || createHash('sha256').update(body).digest('hex') !== digest) throw new Error(`cat answered ${res.statusCode} with ${body.length} bytes`);
  return ms;
}
/** The flooders: `count` clients, each from its own loopback address, each sending a made-up key as soon as it has an answer, until stdin closes. */
const FLOODER = `
import { Agent, request } from 'undici';
const [api, cid, count] = process.argv.slice(1);
const statuses = {};
let flooding = true;
let answered = 0;
process.stdin.on('end', () => { flooding = false; }).resume();
await Promise.all(Array.from({ length: Number(count) }, async (_, i) => {
  const agent = new Agent({ connections: 1, connect: { localAddress: '127.0.0.' + (2 + i) } });
  for (let n = 0; flooding; n++) {
    const res = await request(api + '/cat?arg=' + cid, { method: 'POST', dispatcher: agent, headers: { authorization: 'Basic ' + Buffer.from('made-up-key-' + i + '-' + n + ':guess').toString('base64') } });
    await res.body.text();
    statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
    if (++answered === Number(count)) process.stdout.write('ON\\n');
  }
  await agent.close();
}));
process.stdout.write('DONE ' + JSON.stringify(statuses) + '\\n');
`;
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
async function medianCat(runs: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) times.push(await timedCat());
  return median(times);
}

t.test('64 concurrent clients with made-up keys: every cat still answers in full, and the budget turns the flood away', async (t) => {
  // Warm up: the key's secret is checked once and remembered; the blocks are read once.
  await timedCat();
  const unloaded = await medianCat(7);

  // The flooders run in a process of their own: their work is not the test's (the cat's client's) work.
  const flooder = spawn(process.execPath, ['--input-type=module', '-e', FLOODER, api, cid!, String(FLOODERS)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const flooderExited = new Promise<void>((resolve) => flooder.once('exit', () => resolve()));
  t.teardown(async () => { flooder.kill('SIGKILL'); await flooderExited; });
  let out = '';
  flooder.stdout!.on('data', (chunk: Buffer) => { out += chunk.toString(); });
  // The flood is on once every client has had an answer.
  await new Promise<void>((resolve) => flooder.stdout!.on('data', () => { if (out.includes('ON\n')) resolve(); }));
  const loaded = await medianCat(7);
  flooder.stdin!.end();
  await flooderExited;
  const statuses = new Map(Object.entries(JSON.parse(/DONE (\{.*\})/.exec(out)![1]!) as Record<string, number>).map(([k, v]) => [Number(k), v]));

  t.same([...statuses.keys()].filter((s) => s !== 401 && s !== 429), [], `made-up keys got only 401 or 429 (${JSON.stringify(Object.fromEntries(statuses))})`);
  t.ok((statuses.get(429) ?? 0) > 0, 'the refusal budget turned some away');
  // Starved, the cats failed (HTTP 500 after 30 s): timedCat throws on anything but every byte. How much
  // slower they are under the flood depends on how busy the machine is, so it is reported, not asserted
  // (the ipfs-cat bench measures the file path's speed).
  t.comment(`cat under the flood ${loaded.toFixed(1)} ms (median of 7), unloaded ${unloaded.toFixed(1)} ms: ratio ${(loaded / unloaded).toFixed(2)}`);
});
