/**
 * A file-storage reader that stops reading a large `cat` from the default gateway (embedded IPFS node in
 * the gateway's process): the gateway's memory must not grow with the file, only by a bounded window.
 */
import t from 'tap';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { create } from 'kubo-rpc-client';
import { TSX_NODE_ARGS } from '../helpers/tsx-node-args.js';
import { basic } from '../helpers/ipfs-gateway.js';
import { report, rssMiB, until } from './helpers.js';

const FILE_MIB = 160;
const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-paused-reader-'));
t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));

/** The gateway in a process of its own, with its embedded node storing blocks in `dataDir`. */
async function startChild(): Promise<{ pid: number; api: string; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [...TSX_NODE_ARGS, fileURLToPath(new URL('../helpers/ipfs-gateway-child.ts', import.meta.url)), 'embedded', dataDir], { stdio: ['pipe', 'pipe', 'inherit'] });
  const killChild = (): void => void child.kill('SIGKILL');
  process.once('exit', killChild);
  const stop = async (): Promise<void> => {
    process.off('exit', killChild);
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.stdin!.end();
    child.kill('SIGTERM');
    await exited;
  };
  t.teardown(stop);
  const port = await new Promise<number>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      const match = /^READY (\d+)$/.exec(line);
      if (match !== null) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`the gateway process exited (${code})`)));
  });
  return { pid: child.pid!, api: `http://127.0.0.1:${port}/ipfs/api/v0`, stop };
}

const authorization = basic('ipfs-child-key-0001', 'ipfs-child-secret');

/** Starts a `cat` and resolves with its response once the first bytes arrived; the caller decides when to read on. */
function startCat(api: string, cid: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${api}/cat?arg=${cid}`, { method: 'POST', headers: { authorization } }, (res) => {
      res.once('readable', () => resolve(res));
    });
    req.once('error', reject);
    req.end();
  });
}

t.test(`a reader that stops reading a ${FILE_MIB} MiB cat costs the gateway a bounded window of memory`, async (t) => {
  const content = randomBytes(FILE_MIB * 1024 * 1024);
  const small = randomBytes(8 * 1024 * 1024);
  // Add with one gateway process, measure a fresh one (blocks stay in the data directory): the memory
  // an upload used is not in the baseline.
  const adder = await startChild();
  const client = create({ url: adder.api, headers: { authorization } });
  const { cid } = await client.add(content);
  const { cid: smallCid } = await client.add(small);
  await adder.stop();
  const expected = createHash('sha256').update(content).digest('hex');

  const gateway = await startChild();
  const pid = gateway.pid;
  // Warm up with a small file, so the baseline includes the code paths and pools a read uses.
  const warm = await startCat(gateway.api, smallCid.toString());
  for await (const _ of warm) { /* drain */ }
  const baseline = rssMiB(pid);

  const paused = await startCat(gateway.api, cid.toString());
  paused.pause();
  // Watch the gateway while the reader reads nothing: until its memory has stopped moving for a while.
  let peak = baseline;
  let stableSince = Date.now();
  let last = baseline;
  await until(() => {
    const now = rssMiB(pid);
    peak = Math.max(peak, now);
    if (Math.abs(now - last) > 1) stableSince = Date.now();
    last = now;
    return Date.now() - stableSince;
  }, (stableMs) => stableMs >= 1500, 'the gateway memory to settle while the reader is paused', 60_000);
  const grew = peak - baseline;

  const hash = createHash('sha256');
  let bytes = 0;
  paused.resume();
  for await (const chunk of paused) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  report('paused cat reader (embedded node)', { fileMiB: FILE_MIB, rssBaselineMiB: baseline.toFixed(1), rssPeakPausedMiB: peak.toFixed(1), grewMiB: grew.toFixed(1) });
  t.ok(grew <= 64, `RSS grew by ${grew.toFixed(1)} MiB while the reader was paused (at most 64)`);
  t.equal(bytes, content.length, 'the whole file arrived once the reader read on');
  t.equal(hash.digest('hex'), expected, 'byte for byte');
});
