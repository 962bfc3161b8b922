/**
 * IPFS `cat` of a large file: the same file (256 MiB, 64 MiB with --quick), streamed from the devnet's
 * embedded IPFS node directly and through the gateway's file-storage API (basic auth, plan, rate
 * buckets, streamed relay). It reports the throughput of each, their ratio, and how much the gateway
 * process's resident memory grew while it streamed (it should stay flat: the body is relayed chunk by
 * chunk with backpressure, never held).
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { cpuDelta, ownCpuTime, totalCpuTime } from '../lib/cpu.js';
import { compare, startServer, summarize, type BenchOptions, type ComparisonReport, type RoundResult, type TargetReport } from '../lib/harness.js';
import type { ServerHandle } from '../lib/processes.js';
import type { Scenario } from '../lib/scenario.js';

const KEY = 'bench-ipfs-key-0001';
const SECRET = 'bench-ipfs-secret-0001';
const CHUNK = 65_536;
const MIB = 1 << 20;
/** The gateway's peak RSS growth while streaming may not exceed this. */
const RSS_BUDGET_MIB = 64;

/** Chunk `n` of a deterministic, non-repeating-looking byte stream (slices of a 1 MiB pseudo-random pattern). */
function patternSource(): (n: number) => Buffer {
  const pattern = Buffer.alloc(MIB + CHUNK);
  for (let o = 0, i = 0; o < pattern.length; o += 32, i++) createHash('sha256').update(`tollgate-bench-ipfs:${i}`).digest().copy(pattern, o);
  return (n) => {
    const start = (n * 7919 * 64) % MIB;
    return pattern.subarray(start, start + CHUNK);
  };
}

/** Adds `bytes` of the pattern to the node with `POST /api/v0/add` (a streamed multipart upload); returns the CID. */
async function addFile(nodeUrl: string, bytes: number): Promise<string> {
  const chunk = patternSource();
  const boundary = '----tollgate-bench-ipfs';
  async function* body(): AsyncGenerator<Buffer> {
    yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename=""\r\nContent-Type: application/octet-stream\r\n\r\n`);
    for (let n = 0; n < bytes / CHUNK; n++) yield Buffer.from(chunk(n));
    yield Buffer.from(`\r\n--${boundary}--\r\n`);
  }
  const res = await request(`${nodeUrl}/api/v0/add`, {
    method: 'POST',
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
    body: Readable.from(body()),
    headersTimeout: 600_000,
    bodyTimeout: 600_000,
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`adding the bench file failed: HTTP ${res.statusCode} ${text}`);
  return (JSON.parse(text.trim().split('\n').at(-1)!) as { Hash: string }).Hash;
}

/** What one `cat` gave. */
interface Cat {
  readonly ms: number;
  readonly bytes: number;
  readonly problem?: string;
}

async function cat(url: string, headers: Record<string, string>, expected: number): Promise<Cat> {
  const started = performance.now();
  try {
    const res = await request(url, { method: 'POST', headers, headersTimeout: 120_000, bodyTimeout: 120_000 });
    let bytes = 0;
    for await (const chunk of res.body) bytes += (chunk as Buffer).length;
    const ms = performance.now() - started;
    const trailer = res.trailers['x-stream-error'];
    if (res.statusCode !== 200) return { ms, bytes, problem: `HTTP ${res.statusCode}` };
    if (trailer !== undefined && trailer !== '') return { ms, bytes, problem: `X-Stream-Error: ${String(trailer)}` };
    if (bytes !== expected) return { ms, bytes, problem: `${bytes} bytes instead of ${expected}` };
    return { ms, bytes };
  } catch (error) {
    return { ms: performance.now() - started, bytes: 0, problem: `connection error: ${(error as Error).message}` };
  }
}

function rss(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) * 1024;
  } catch {
    return NaN;
  }
}

/** A started target of this scenario. */
interface CatTarget {
  readonly name: string;
  readonly description: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly pids: readonly number[];
}

/** Measures one target: `cats` sequential cats of the whole file; RSS of `watch` sampled throughout. */
async function measure(target: CatTarget, round: number, cats: number, size: number, upstreamPids: readonly number[], watch?: { pid: number; hwm: boolean }): Promise<{ result: RoundResult; peak: number }> {
  const serverBefore = totalCpuTime(target.pids);
  const upstreamBefore = totalCpuTime(upstreamPids);
  const ownBefore = ownCpuTime();
  let peak = watch === undefined ? NaN : rss(watch.pid, 'VmRSS');
  const sampler = watch === undefined ? undefined : setInterval(() => (peak = Math.max(peak, rss(watch.pid, 'VmRSS'))), 20);
  const started = performance.now();
  const results: Cat[] = [];
  for (let i = 0; i < cats; i++) results.push(await cat(target.url, target.headers, size));
  const seconds = (performance.now() - started) / 1000;
  if (sampler !== undefined) clearInterval(sampler);
  if (watch?.hwm === true) peak = Math.max(peak, rss(watch.pid, 'VmHWM'));
  const server = cpuDelta(serverBefore, totalCpuTime(target.pids));
  const upstream = cpuDelta(upstreamBefore, totalCpuTime(upstreamPids));
  const own = cpuDelta(ownBefore, ownCpuTime());
  const ok = results.filter((r) => r.problem === undefined);
  const mib = ok.reduce((sum, r) => sum + r.bytes, 0) / MIB;
  const sorted = results.map((r) => r.ms).sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN;
  const perMib = (cpu: number): number => (mib > 0 ? (cpu / mib) * 1e6 : NaN);
  const problems = results.filter((r) => r.problem !== undefined);
  const result: RoundResult = {
    round,
    seconds,
    responses: results.length,
    ok: ok.length,
    okPerSecond: mib / seconds,
    latency: { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: sorted.at(-1) ?? NaN, mean: sorted.reduce((a, b) => a + b, 0) / Math.max(1, sorted.length) },
    non2xx: problems.filter((p) => p.problem!.startsWith('HTTP')).length,
    badBody: problems.filter((p) => !p.problem!.startsWith('HTTP') && !p.problem!.startsWith('connection')).length,
    transportErrors: problems.filter((p) => p.problem!.startsWith('connection')).length,
    timeouts: 0,
    statuses: {},
    samples: [...new Set(problems.map((p) => p.problem!))].slice(0, 3),
    serverCores: (server.user + server.system) / seconds,
    upstreamCores: (upstream.user + upstream.system) / seconds,
    loadgenCores: (own.user + own.system) / seconds,
    serverMicrosPerRequest: perMib(server.user + server.system),
    serverUserMicrosPerRequest: perMib(server.user),
    serverSystemMicrosPerRequest: perMib(server.system),
    warmupFailures: 0,
    warmupResponses: 0,
  };
  return { result, peak };
}

function report(target: CatTarget, rounds: readonly RoundResult[]): TargetReport {
  return summarize(target.name, target.description, rounds);
}

const scenario: Scenario = {
  name: 'ipfs-cat',
  description: 'IPFS cat of a large file: the embedded IPFS node directly vs through the gateway\'s file-storage API',
  targets: ['direct', 'gateway'],

  async run(options: BenchOptions) {
    const size = (options.quick ? 64 : 256) * MIB;
    const cats = options.quick ? 1 : 2;
    const wanted = (name: string): boolean => options.targets === undefined || options.targets.includes(name);
    const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-bench-ipfs-'));
    const servers: ServerHandle[] = [];
    try {
      process.stderr.write(`[bench] ipfs-cat: starting the IPFS node and adding a ${size / MIB} MiB file\n`);
      const node = await startServer('ipfs-node', 'bench/servers/ipfs-node.ts', { 'data-dir': dataDir }, options);
      servers.push(node);
      const cid = await addFile(node.url, size);
      const targets: CatTarget[] = [];
      if (wanted('direct')) {
        targets.push({ name: 'direct', description: 'the embedded IPFS node itself (helia over blockstore-fs)', url: `${node.url}/api/v0/cat?arg=${cid}`, headers: {}, pids: node.ready.pids });
      }
      let gatewayPid: number | undefined;
      if (wanted('gateway')) {
        const gateway = await startServer('gateway', 'bench/servers/ipfs-gateway.ts', { upstream: node.url, key: KEY, secret: SECRET }, options);
        servers.push(gateway);
        gatewayPid = gateway.pid;
        const authorization = `Basic ${Buffer.from(`${KEY}:${SECRET}`).toString('base64')}`;
        targets.push({ name: 'gateway', description: 'Tollgate: ipfs plugin, basic auth + secret, plan, rate buckets, streamed relay', url: `${gateway.url}/ipfs/api/v0/cat?arg=${cid}`, headers: { authorization }, pids: gateway.ready.pids });
      }

      // Priming: the JIT, the pools and the page cache, on a part of the file.
      if (options.prime > 0) {
        process.stderr.write('[bench] ipfs-cat: priming every target\n');
        for (const target of targets) for (let i = 0; i < 2; i++) await cat(`${target.url}&length=${Math.min(size, 32 * MIB)}`, target.headers, Math.min(size, 32 * MIB));
      }
      const baseline = gatewayPid === undefined ? NaN : rss(gatewayPid, 'VmRSS');
      let peakResettable = gatewayPid !== undefined;
      if (gatewayPid !== undefined) {
        try {
          writeFileSync(`/proc/${gatewayPid}/clear_refs`, '5'); // resets VmHWM to the current RSS
        } catch {
          peakResettable = false;
        }
      }
      const rounds = new Map<string, RoundResult[]>(targets.map((t) => [t.name, []]));
      let peak = baseline;
      for (let round = 1; round <= options.rounds; round++) {
        for (const target of targets) {
          const watch = target.name === 'gateway' && gatewayPid !== undefined ? { pid: gatewayPid, hwm: peakResettable } : undefined;
          const { result, peak: seen } = await measure(target, round, cats, size, target.name === 'gateway' ? node.ready.pids : [], watch);
          if (watch !== undefined && Number.isFinite(seen)) peak = Math.max(peak, seen);
          rounds.get(target.name)!.push(result);
          process.stderr.write(`[bench] round ${round}/${options.rounds} ${target.name.padEnd(8)} ${result.okPerSecond.toFixed(1)} MiB/s  ${result.ok}/${result.responses} cats  server ${(result.serverCores * 100).toFixed(0)}% cpu\n`);
        }
      }
      const measured = targets.map((t) => report(t, rounds.get(t.name)!));
      const comparisons: ComparisonReport[] = [...compare(measured, [{ numerator: 'gateway', denominator: 'direct', goal: 0.9 }])];
      const notes = [
        `file: ${size / MIB} MiB (CIDv0 ${cid}, kubo's add defaults), ${cats} whole cat(s) per target per round, one at a time`,
        'for this scenario the req/s column is MiB/s, p50/p99 are per cat, and CPU us/req is CPU microseconds per MiB served',
      ];
      if (gatewayPid !== undefined) {
        const growth = (peak - baseline) / MIB;
        const verdict = Number.isFinite(growth) && growth <= RSS_BUDGET_MIB ? 'PASS' : 'MISS';
        const memory: ComparisonReport = {
          numerator: 'gateway',
          denominator: 'gateway',
          label: `gateway peak RSS growth, MiB (<= ${RSS_BUDGET_MIB})`,
          ratio: growth,
          range: [growth, growth],
          cpuEfficiency: NaN,
          verdict,
          caveats: [],
        };
        comparisons.push(verdict === 'MISS' ? { ...memory, reason: `grew ${growth.toFixed(1)} MiB while streaming` } : memory);
        notes.push(`gateway RSS: ${(baseline / MIB).toFixed(1)} MiB after priming, peak ${(peak / MIB).toFixed(1)} MiB while streaming (${peakResettable ? 'VmHWM reset before measuring, and' : ''} sampled every 20 ms): growth ${growth.toFixed(1)} MiB, ${verdict}`);
      }
      return { scenario: scenario.name, description: scenario.description, targets: measured, comparisons, notes };
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
};

export default scenario;
