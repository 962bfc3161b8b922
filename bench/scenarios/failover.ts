/**
 * Failover: a steady load of failover-eligible calls (`eth_getUncleByBlockHashAndIndex` on a plan that
 * may fail over) through the gateway in front of two Anvil primaries and an Anvil partner. Primary A is
 * SIGKILLed, then primary B. It reports the errors clients saw in each phase (the goal is zero), how long
 * after B's death the partner served, and p99 latency in the second after each kill against before.
 */
import { Pool } from 'undici';
import { startAnvil, type AnvilInstance } from '@tollgate/devnet';
import { cpuDelta, ownCpuTime, totalCpuTime, type CpuTime } from '../lib/cpu.js';
import { startServer, type BenchOptions, type RoundResult, type TargetReport } from '../lib/harness.js';
import type { LoadResult } from '../lib/load.js';
import type { ServerHandle } from '../lib/processes.js';
import type { Scenario } from '../lib/scenario.js';

const KEY = 'bench-failover-key-0001';
const PATH = `/eth/v3/${KEY}`;
const STATUS_PATH = '/__bench/status';
/** The three chains share their genesis block (same genesis timestamp), as nodes of one network do. */
const GENESIS_ARGS = ['--timestamp', '1700000000'];
/** How long after a kill counts as "the switch". */
const SWITCH_WINDOW_MS = 1_000;

/** One answered (or failed) call of the load. */
interface Sample {
  /** When it finished, ms since the load started. */
  readonly at: number;
  /** Latency, ms. */
  readonly ms: number;
  /** HTTP status; 0 for a connection error. */
  readonly status: number;
  /** Why it is not a correct answer, if it is not. */
  readonly problem: string | undefined;
  /** The upstream that served it (`x-tollgate-upstream`). */
  readonly servedBy: string;
}

/** A closed-loop load: `connections` workers, each sending the next call when the previous one finished. */
function startLoad(url: string, connections: number, body: string): { samples: Sample[]; started: number; stop(): Promise<void> } {
  const pool = new Pool(url, { connections, pipelining: 1, keepAliveTimeout: 30_000 });
  const samples: Sample[] = [];
  const started = performance.now();
  let running = true;
  const worker = async (): Promise<void> => {
    while (running) {
      const t0 = performance.now();
      let status = 0;
      let problem: string | undefined;
      let servedBy = '';
      try {
        const res = await pool.request({ path: PATH, method: 'POST', headers: { 'content-type': 'application/json' }, body, headersTimeout: 30_000, bodyTimeout: 30_000 });
        status = res.statusCode;
        servedBy = String(res.headers['x-tollgate-upstream'] ?? '');
        const text = await res.body.text();
        if (status !== 200) problem = `HTTP ${status}: ${text.slice(0, 160)}`;
        else {
          const parsed = JSON.parse(text) as { id?: unknown; result?: unknown; error?: unknown };
          if (parsed.error !== undefined) problem = `JSON-RPC error: ${text.slice(0, 160)}`;
          else if (parsed.id !== 1 || !('result' in parsed)) problem = `not an answer: ${text.slice(0, 160)}`;
        }
      } catch (error) {
        problem = `connection error: ${(error as Error).message}`;
      }
      const t1 = performance.now();
      samples.push({ at: t1 - started, ms: t1 - t0, status, problem, servedBy });
    }
  };
  const workers = Array.from({ length: connections }, worker);
  return {
    samples,
    started,
    async stop() {
      running = false;
      await Promise.all(workers);
      await pool.close();
    },
  };
}

function percentile(sorted: readonly number[], q: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

function loadResult(samples: readonly Sample[], seconds: number): LoadResult {
  const latencies = samples.map((s) => s.ms).sort((a, b) => a - b);
  const ok = samples.filter((s) => s.problem === undefined).length;
  const statuses: Record<string, number> = {};
  for (const s of samples) statuses[s.status] = (statuses[s.status] ?? 0) + 1;
  const non2xx = samples.filter((s) => s.status !== 0 && (s.status < 200 || s.status > 299)).length;
  const transportErrors = samples.filter((s) => s.status === 0).length;
  return {
    seconds,
    responses: samples.length - transportErrors,
    ok,
    okPerSecond: ok / seconds,
    latency: {
      p50: percentile(latencies, 0.5),
      p90: percentile(latencies, 0.9),
      p99: percentile(latencies, 0.99),
      max: latencies.at(-1) ?? NaN,
      mean: latencies.reduce((a, b) => a + b, 0) / Math.max(1, latencies.length),
    },
    non2xx,
    badBody: samples.length - ok - non2xx - transportErrors,
    transportErrors,
    timeouts: 0,
    statuses,
    samples: [...new Set(samples.filter((s) => s.problem !== undefined).map((s) => s.problem!))].slice(0, 3),
  };
}

interface Cpu {
  readonly server: CpuTime;
  /** Per upstream process (NaN once it is gone). */
  readonly upstream: readonly CpuTime[];
  readonly own: CpuTime;
}

/** CPU the upstreams used between two snapshots, over the processes alive at both. */
function upstreamDelta(before: readonly CpuTime[], after: readonly CpuTime[]): CpuTime {
  let user = 0;
  let system = 0;
  before.forEach((b, i) => {
    const d = cpuDelta(b, after[i]!);
    if (Number.isFinite(d.user) && Number.isFinite(d.system)) {
      user += d.user;
      system += d.system;
    }
  });
  return { user, system };
}

/** A phase of the run as a table row. */
function phaseReport(name: string, description: string, samples: readonly Sample[], seconds: number, before: Cpu, after: Cpu): TargetReport {
  const result = loadResult(samples, seconds);
  const server = cpuDelta(before.server, after.server);
  const upstream = upstreamDelta(before.upstream, after.upstream);
  const own = cpuDelta(before.own, after.own);
  const perRequest = (cpu: number): number => (result.ok > 0 ? (cpu / result.ok) * 1e6 : NaN);
  const round: RoundResult = {
    ...result,
    round: 1,
    serverCores: (server.user + server.system) / seconds,
    upstreamCores: (upstream.user + upstream.system) / seconds,
    loadgenCores: (own.user + own.system) / seconds,
    serverMicrosPerRequest: perRequest(server.user + server.system),
    serverUserMicrosPerRequest: perRequest(server.user),
    serverSystemMicrosPerRequest: perRequest(server.system),
    warmupFailures: 0,
    warmupResponses: 0,
  };
  return {
    name,
    description,
    rounds: [round],
    okPerSecond: result.okPerSecond,
    p50: result.latency.p50,
    p99: result.latency.p99,
    serverMicrosPerRequest: round.serverMicrosPerRequest,
    serverUserMicrosPerRequest: round.serverUserMicrosPerRequest,
    serverSystemMicrosPerRequest: round.serverSystemMicrosPerRequest,
    serverCores: round.serverCores,
    upstreamCores: round.upstreamCores,
    loadgenCores: round.loadgenCores,
    totals: { responses: result.responses, ok: result.ok, non2xx: result.non2xx, badBody: result.badBody, transportErrors: result.transportErrors, warmupFailures: 0 },
    samples: result.samples,
  };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function servedShares(samples: readonly Sample[]): string {
  const counts = new Map<string, number>();
  for (const s of samples) if (s.servedBy !== '') counts.set(s.servedBy, (counts.get(s.servedBy) ?? 0) + 1);
  return [...counts].map(([name, n]) => `${name} ${((n / Math.max(1, samples.length)) * 100).toFixed(1)}%`).join(', ') || 'none';
}

const scenario: Scenario = {
  name: 'failover',
  description: 'eligible calls under a steady load while the primaries are SIGKILLed one after the other: errors, time to the partner, p99 during the switch',
  targets: ['gateway'],

  async run(options: BenchOptions) {
    const anvils: AnvilInstance[] = await Promise.all([startAnvil({ args: GENESIS_ARGS }), startAnvil({ args: GENESIS_ARGS }), startAnvil({ args: GENESIS_ARGS })]);
    const [a, b, partner] = anvils as [AnvilInstance, AnvilInstance, AnvilInstance];
    let server: ServerHandle | undefined;
    try {
      const genesis = (await a.rpc<{ hash: string }>('eth_getBlockByNumber', ['0x0', false])).hash;
      server = await startServer('failover-gateway', 'bench/servers/failover-gateway.ts', { 'primary-a': a.url, 'primary-b': b.url, partner: partner.url, key: KEY }, options);
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getUncleByBlockHashAndIndex', params: [genesis, '0x0'] });
      const serverPid = server.ready.pids;
      const upstreamPids = anvils.map((x) => x.pid);
      // A killed Anvil's CPU can no longer be read: the upstream figure is the live nodes' from then on.
      const upstreamCpu = (): CpuTime[] => upstreamPids.map((pid) => totalCpuTime([pid]));
      const cpu = (): Cpu => ({ server: totalCpuTime(serverPid), upstream: upstreamCpu(), own: ownCpuTime() });

      // Let the probes learn the heads and the JIT settle, unmeasured.
      const warm = startLoad(server.url, options.connections, body);
      await sleep(Math.max(500, (options.prime + options.warmup) * 1000));
      await warm.stop();
      const warmFailures = warm.samples.filter((s) => s.problem !== undefined).length;

      const phaseMs = options.duration * 1000;
      const load = startLoad(server.url, options.connections, body);
      const switchMs = Math.min(SWITCH_WINDOW_MS, phaseMs / 2);
      const cpu0 = cpu();
      await sleep(phaseMs);
      const killA = performance.now() - load.started;
      const cpu1 = cpu();
      a.process.kill('SIGKILL');
      await sleep(switchMs);
      const cpu1s = cpu();
      await sleep(phaseMs - switchMs);
      const killB = performance.now() - load.started;
      const cpu2 = cpu();
      b.process.kill('SIGKILL');
      await sleep(switchMs);
      const cpu2s = cpu();
      await sleep(phaseMs - switchMs);
      const end = performance.now() - load.started;
      const cpu3 = cpu();
      await load.stop();

      // Calls the partner may not take get the documented 503.
      const pool = new Pool(server.url, { connections: 1 });
      const refused: string[] = [];
      for (let i = 0; i < 10; i++) {
        const res = await pool.request({ path: PATH, method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}' });
        const text = await res.body.text();
        refused.push(`${res.statusCode} ${(JSON.parse(text) as { error?: { code?: number } }).error?.code ?? 'answer'} retry-after=${String(res.headers['retry-after'] ?? '-')}`);
      }
      const statusRes = await pool.request({ path: STATUS_PATH, method: 'GET' });
      const status = (await statusRes.body.json()) as Array<{ name: string; details: { breaker: { state: string; opened: number }; counters: { attempts: number; retries: number; failovers: number; failures: number } } }>;
      await pool.close();

      const samples = load.samples;
      const within = (from: number, to: number): Sample[] => samples.filter((s) => s.at >= from && s.at < to);
      const before = within(0, killA);
      const afterA = within(killA, killB);
      const afterB = within(killB, end + 60_000);
      const switchA = within(killA, killA + switchMs);
      const switchB = within(killB, killB + switchMs);
      const seconds = (ms: number): number => ms / 1000;

      const targets = [
        phaseReport('both primaries', 'A and B up: calls shared between them', before, seconds(killA), cpu0, cpu1),
        phaseReport('A killed', 'after SIGKILL of primary A: B serves, A\'s failed attempts retried on B', afterA, seconds(killB - killA), cpu1, cpu2),
        phaseReport('A+B killed', 'after SIGKILL of primary B: the partner serves eligible calls', afterB, seconds(end - killB), cpu2, cpu3),
        phaseReport('switch to B', `the first ${switchMs} ms after A's kill`, switchA, seconds(switchMs), cpu1, cpu1s),
        phaseReport('switch to partner', `the first ${switchMs} ms after B's kill`, switchB, seconds(switchMs), cpu2, cpu2s),
      ];
      // The switch rows repeat samples of their phases: count their failures once, in the phases.
      const rows = targets.map((t, i) => (i < 3 ? t : { ...t, totals: { ...t.totals, non2xx: 0, badBody: 0, transportErrors: 0 } }));

      const firstPartner = afterB.find((s) => s.servedBy === 'partner');
      const lastPrimary = [...afterB].reverse().find((s) => s.servedBy !== 'partner');
      const errors = samples.filter((s) => s.problem !== undefined).length;
      const fmt = (n: number | undefined, digits = 1): string => (n === undefined || !Number.isFinite(n) ? '-' : n.toFixed(digits));
      const p99 = (xs: readonly Sample[]): number => loadResult(xs, 1).latency.p99;
      const breakers = status.map((s) => `${s.name} ${s.details.breaker.state} (opened ${s.details.breaker.opened}x; attempts ${s.details.counters.attempts}, retries ${s.details.counters.retries}, failovers ${s.details.counters.failovers}, failures ${s.details.counters.failures})`);
      return {
        scenario: scenario.name,
        description: scenario.description,
        targets: rows,
        comparisons: [],
        notes: [
          `request: POST ${body.length} bytes, eth_getUncleByBlockHashAndIndex(genesis, 0) (failover-eligible) on a plan with failover; the answer is null on every node`,
          `errors seen by clients: ${errors} of ${samples.length} calls (goal 0)${warmFailures > 0 ? `; ${warmFailures} during the unmeasured warm-up` : ''}`,
          `time until the partner served after B's kill: ${fmt(firstPartner === undefined ? undefined : firstPartner.at - killB)} ms (${lastPrimary === undefined ? 'no answer from a primary after it' : `the last answer from a primary came ${fmt(lastPrimary.at - killB)} ms after it`})`,
          `p99 before the kills ${fmt(p99(before), 2)} ms; in the ${switchMs} ms after A's kill ${fmt(p99(switchA), 2)} ms; after B's kill ${fmt(p99(switchB), 2)} ms; steady on the partner ${fmt(p99(within(killB + switchMs, end + 60_000)), 2)} ms`,
          `served by: before ${servedShares(before)}; after A's kill ${servedShares(afterA)}; after B's kill ${servedShares(afterB)}`,
          `an ineligible call (eth_chainId) with both primaries dead: ${[...new Set(refused)].join('; ')} (documented: 503, -33503, Retry-After)`,
          `upstreams at the end: ${breakers.join('; ')}`,
          'gateway: default failover settings (breaker opens after 5 consecutive failures for 5 s, probes every 2 s); Anvil children started by the bench, SIGKILLed by it',
        ],
      };
    } finally {
      await server?.stop();
      await Promise.all(anvils.map((x) => x.stop()));
    }
  },
};

export default scenario;
