/**
 * What the file-storage scenarios (`ipfs-cat`, `ipfs-add`) share: a deterministic byte pattern, a
 * streamed `add` upload, the gateway's resident memory, and one round's measurement of whole-file
 * transfers (throughput in MiB/s, CPU per MiB, RSS sampled throughout).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { readFileSync, writeFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { getGlobalDispatcher, request } from 'undici';
import { cpuDelta, ownCpuTime, totalCpuTime } from './cpu.js';
import { summarizeProfile, type ProfileSummary } from './cpuprofile.js';
import { compare, profilePath, summarize, type BenchOptions, type ComparisonReport, type RoundResult, type TargetReport } from './harness.js';
import type { ServerHandle } from './processes.js';

/** The bench key and secret of the file-storage gateway. */
export const IPFS_KEY = 'bench-ipfs-key-0001';
export const IPFS_SECRET = 'bench-ipfs-secret-0001';
const CHUNK = 65_536;
/** The gateway's peak RSS growth while streaming may not exceed this. */
const RSS_BUDGET_MIB = 64;
export const MIB = 1 << 20;

/** Chunk `n` of a deterministic, non-repeating-looking byte stream (slices of a 1 MiB pseudo-random pattern). */
function patternSource(): (n: number) => Buffer {
  const pattern = Buffer.alloc(MIB + CHUNK);
  for (let o = 0, i = 0; o < pattern.length; o += 32, i++) createHash('sha256').update(`tollgate-bench-ipfs:${i}`).digest().copy(pattern, o);
  return (n) => {
    const start = (n * 7919 * 64) % MIB;
    return pattern.subarray(start, start + CHUNK);
  };
}

/** Adds `bytes` of the pattern with `POST <apiUrl>/add` (a streamed multipart upload); returns the CID. */
export async function addFile(apiUrl: string, bytes: number, headers: Record<string, string> = {}): Promise<string> {
  const chunk = patternSource();
  const boundary = '----tollgate-bench-ipfs';
  async function* body(): AsyncGenerator<Buffer> {
    yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename=""\r\nContent-Type: application/octet-stream\r\n\r\n`);
    for (let n = 0; n < bytes / CHUNK; n++) yield Buffer.from(chunk(n));
    yield Buffer.from(`\r\n--${boundary}--\r\n`);
  }
  const res = await request(`${apiUrl}/add`, {
    method: 'POST',
    headers: { ...headers, 'content-type': `multipart/form-data; boundary=${boundary}` },
    body: Readable.from(body()),
    headersTimeout: 600_000,
    bodyTimeout: 600_000,
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`adding the bench file failed: HTTP ${res.statusCode} ${text}`);
  return (JSON.parse(text.trim().split('\n').at(-1)!) as { Hash: string }).Hash;
}

/**
 * Where the processes of a file-storage scenario run: the node on CPU 0, its clients (the bench itself,
 * the bare relay, the gateway) on the others. The devnet's node takes more than one core by itself while
 * it serves a cat (its block reads run on libuv's thread pool beside its main thread): left free on a
 * 2-core machine, it gets both cores when read directly and has to give a relay's share back when read
 * through one, so the comparison would measure the contention for the node's cores, not the relay. Pinned,
 * the node has the same core in every target. Off with `BENCH_IPFS_CPU_PIN=0`, or without `taskset`
 * (util-linux) or a second CPU.
 */
export class CpuPlacement {
  readonly #cpus = availableParallelism();
  readonly enabled = process.env.BENCH_IPFS_CPU_PIN !== '0' && this.#cpus >= 2 && CpuPlacement.#hasTaskset();

  static #hasTaskset(): boolean {
    try {
      execFileSync('taskset', ['-V'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  }

  /** Puts every thread of the node's process on CPU 0. */
  node(pid: number): void {
    if (this.enabled) this.#pin(pid, '0');
  }

  /** Puts every thread of a client process (a relay, the bench) on the other CPUs. */
  client(pid: number): void {
    if (this.enabled) this.#pin(pid, `1-${this.#cpus - 1}`);
  }

  /** Gives the bench back every CPU. */
  release(): void {
    if (this.enabled) this.#pin(process.pid, `0-${this.#cpus - 1}`);
  }

  /** The note the report prints. */
  note(): string {
    return this.enabled
      ? `CPUs: the node on CPU 0, the bench and the relays on CPU 1-${this.#cpus - 1} (taskset; BENCH_IPFS_CPU_PIN=0 leaves them free)`
      : 'CPUs: not pinned (BENCH_IPFS_CPU_PIN=0, no taskset or one CPU): on 2 cores the node takes more than one, and a relay takes its share from the node';
  }

  #pin(pid: number, cpus: string): void {
    execFileSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
  }
}

/** What one whole-file transfer gave. */
export interface Transfer {
  readonly ms: number;
  readonly bytes: number;
  readonly problem?: string;
}

/**
 * One `cat` of `expected` bytes: its time, the bytes read, and what was wrong with it. Every target is
 * read by this one client: undici's dispatcher (the global keep-alive agent, one connection per target
 * reused across cats) with a handler that only counts the bytes. It reads with no stream, async
 * iterator or per-chunk promise, so the client takes as little CPU as it can: on a small machine the
 * client, the relay and the node share the cores, and a heavy client would take the relay's share (the
 * node's direct answer has no relay to starve).
 */
export function cat(url: string, headers: Record<string, string>, expected: number): Promise<Transfer> {
  const started = performance.now();
  const target = new URL(url);
  return new Promise((resolve) => {
    let status = 0;
    let bytes = 0;
    getGlobalDispatcher().dispatch(
      { origin: target.origin, path: target.pathname + target.search, method: 'POST', headers, headersTimeout: 120_000, bodyTimeout: 120_000 },
      {
        onRequestStart() {},
        onResponseStart(_controller, statusCode) {
          status = statusCode;
        },
        onResponseData(_controller, chunk) {
          bytes += chunk.length;
        },
        onResponseEnd(_controller, trailers) {
          const ms = performance.now() - started;
          const trailer = trailers['x-stream-error'];
          if (status !== 200) resolve({ ms, bytes, problem: `HTTP ${status}` });
          else if (trailer !== undefined && trailer !== '') resolve({ ms, bytes, problem: `X-Stream-Error: ${String(trailer)}` });
          else if (bytes !== expected) resolve({ ms, bytes, problem: `${bytes} bytes instead of ${expected}` });
          else resolve({ ms, bytes });
        },
        onResponseError(_controller, error) {
          resolve({ ms: performance.now() - started, bytes: 0, problem: `connection error: ${error.message}` });
        },
      },
    );
  });
}

/** A process's resident memory (`VmRSS`) or its peak (`VmHWM`), in bytes; NaN when unreadable. */
function rss(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) * 1024;
  } catch {
    return NaN;
  }
}

/** A started target of a file-storage scenario. */
export interface IpfsTarget {
  readonly name: string;
  readonly description: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly pids: readonly number[];
}

/** Measures one target: `count` sequential transfers by `transfer`; RSS of `watch` sampled throughout. */
async function measureTransfers(target: IpfsTarget, round: number, count: number, transfer: (target: IpfsTarget) => Promise<Transfer>, upstreamPids: readonly number[], watch?: { pid: number; hwm: boolean }): Promise<{ result: RoundResult; peak: number }> {
  const serverBefore = totalCpuTime(target.pids);
  const upstreamBefore = totalCpuTime(upstreamPids);
  const ownBefore = ownCpuTime();
  let peak = watch === undefined ? NaN : rss(watch.pid, 'VmRSS');
  const sampler = watch === undefined ? undefined : setInterval(() => (peak = Math.max(peak, rss(watch.pid, 'VmRSS'))), 20);
  const started = performance.now();
  const results: Transfer[] = [];
  for (let i = 0; i < count; i++) results.push(await transfer(target));
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


/** The gateway's RSS growth while it streamed, as a comparison row (PASS within the budget) and a note. */
function memoryVerdict(baseline: number, peak: number, peakResettable: boolean): { comparison: ComparisonReport; note: string } {
  const growth = (peak - baseline) / MIB;
  const verdict = Number.isFinite(growth) && growth <= RSS_BUDGET_MIB ? 'PASS' : 'MISS';
  const memory: ComparisonReport = {
    numerator: 'gateway',
    denominator: 'gateway',
    label: `gateway peak RSS growth, MiB (<= ${RSS_BUDGET_MIB})`,
    ratio: growth,
    range: [growth, growth],
    cpuEfficiency: NaN,
    p99Ratio: NaN,
    verdict,
    caveats: [],
  };
  return {
    comparison: verdict === 'MISS' ? { ...memory, reason: `grew ${growth.toFixed(1)} MiB while streaming` } : memory,
    note: `gateway RSS: ${(baseline / MIB).toFixed(1)} MiB after priming, peak ${(peak / MIB).toFixed(1)} MiB while streaming (${peakResettable ? 'VmHWM reset before measuring, and' : ''} sampled every 20 ms): growth ${growth.toFixed(1)} MiB, ${verdict}`,
  };
}

/**
 * The gateway's RSS now, with its peak (`VmHWM`) reset to it where the kernel allows; `resettable` says
 * whether it did (else the peak is only what the 20 ms samples saw).
 */
function rssBaseline(pid: number | undefined): { baseline: number; resettable: boolean } {
  if (pid === undefined) return { baseline: NaN, resettable: false };
  const baseline = rss(pid, 'VmRSS');
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5'); // resets VmHWM to the current RSS
    return { baseline, resettable: true };
  } catch {
    return { baseline, resettable: false };
  }
}

/** What {@link transferRounds} measures. */
export interface TransferRounds {
  /** The targets, in the order each round measures them. */
  readonly targets: readonly IpfsTarget[];
  /** The gateway process, whose memory is watched (undefined when the gateway is not measured). */
  readonly gatewayPid: number | undefined;
  /** The node's processes, whose CPU counts as the gateway's upstream. */
  readonly nodePids: readonly number[];
  /** Transfers per target per round. */
  readonly count: number;
  /** One whole-file transfer to a target. */
  readonly transfer: (target: IpfsTarget) => Promise<Transfer>;
  /** What a transfer is called in the progress lines (`cats`, `adds`). */
  readonly unit: string;
  /** The gateway/direct throughput goal. */
  readonly goal: number;
  /**
   * The server children to CPU-profile while measured (with `--profile`), each with the targets whose
   * bytes it moves (the node moves every target's; a relay its own).
   */
  readonly profiled?: readonly ProfiledServer[];
}

/** A server child profiled by {@link transferRounds}, and the targets whose bytes it moves. */
export interface ProfiledServer {
  readonly server: ServerHandle;
  readonly targets: readonly string[];
}

/**
 * The profiles of `profiled`, read once their servers stopped (they write them as they stop), with the
 * MiB each moved while profiled as its request count: the `us/req` of the printed summary is per MiB.
 */
export function transferProfiles(options: BenchOptions, profiled: readonly ProfiledServer[], measured: readonly TargetReport[]): Record<string, ProfileSummary> | undefined {
  if (!options.profile) return undefined;
  const profiles: Record<string, ProfileSummary> = {};
  for (const { server, targets } of profiled) {
    const mib = measured.filter((t) => targets.includes(t.name)).reduce((sum, t) => sum + t.rounds.reduce((s, r) => s + r.okPerSecond * r.seconds, 0), 0);
    profiles[server.name] = { ...summarizeProfile(profilePath(server.name, options)), requests: Math.round(mib) };
  }
  return profiles;
}

/**
 * Runs `options.rounds` interleaved rounds of whole-file transfers (every target in each round, the
 * gateway's RSS watched from a reset peak) and returns the targets' reports with the gateway/direct
 * ratio and the gateway's memory verdict.
 */
export async function transferRounds(options: BenchOptions, spec: TransferRounds): Promise<{ measured: TargetReport[]; comparisons: ComparisonReport[]; memoryNote?: string }> {
  const { targets, gatewayPid } = spec;
  const { baseline, resettable } = rssBaseline(gatewayPid);
  const rounds = new Map<string, RoundResult[]>(targets.map((t) => [t.name, []]));
  let peak = baseline;
  // The profiles start right before the first measurement (priming and start-up stay out of them).
  if (options.profile) for (const { server } of spec.profiled ?? []) server.signal('SIGUSR2');
  for (let round = 1; round <= options.rounds; round++) {
    for (const target of targets) {
      const watch = target.name === 'gateway' && gatewayPid !== undefined ? { pid: gatewayPid, hwm: resettable } : undefined;
      const { result, peak: seen } = await measureTransfers(target, round, spec.count, spec.transfer, target.name === 'gateway' ? spec.nodePids : [], watch);
      if (watch !== undefined && Number.isFinite(seen)) peak = Math.max(peak, seen);
      rounds.get(target.name)!.push(result);
      process.stderr.write(`[bench] round ${round}/${options.rounds} ${target.name.padEnd(8)} ${result.okPerSecond.toFixed(1)} MiB/s  ${result.ok}/${result.responses} ${spec.unit}  server ${(result.serverCores * 100).toFixed(0)}% cpu\n`);
    }
  }
  const measured = targets.map((t) => summarize(t.name, t.description, rounds.get(t.name)!));
  // gateway/bare-proxy and bare-proxy/direct tell the gateway's own cost from any relay's (when measured).
  const comparisons: ComparisonReport[] = [
    ...compare(measured, [
      { numerator: 'gateway', denominator: 'direct', goal: spec.goal },
      { numerator: 'gateway', denominator: 'bare-proxy' },
      { numerator: 'bare-proxy', denominator: 'direct' },
    ]),
  ];
  if (gatewayPid === undefined) return { measured, comparisons };
  const memory = memoryVerdict(baseline, peak, resettable);
  return { measured, comparisons: [...comparisons, memory.comparison], memoryNote: memory.note };
}
