/**
 * The parts every scenario shares: the run options, starting server children (with profiling when asked),
 * measuring targets in interleaved rounds, and comparing them.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { failures, runLoad, type LoadRequest, type LoadResult } from './load.js';
import { cpuDelta, ownCpuTime, totalCpuTime } from './cpu.js';
import { REPO_ROOT, spawnServer, type ServerHandle } from './processes.js';
import { summarizeProfile, type ProfileSummary } from './cpuprofile.js';
import { heapProfilePath, summarizeAllocations } from './heapprofile.js';

/** Options of a bench run (from flags, environment and `--quick`). */
export interface BenchOptions {
  /** Measured seconds per target per round. */
  readonly duration: number;
  /** Unmeasured seconds of load on each target before its first round (lets the JIT settle). */
  readonly prime: number;
  /** Unmeasured seconds of load before each measurement. */
  readonly warmup: number;
  /** Concurrent connections of the load generator. */
  readonly connections: number;
  /** Rounds; each round measures every target once, in the same order (A B C D A B C D ...). */
  readonly rounds: number;
  /**
   * Start every target's servers again for each round (and prime them again), so that each round is
   * measured on new processes: a server whose JIT settled well or badly counts for one round, not for
   * the whole run. Not with `profile` (a profile covers one process).
   */
  readonly fresh?: boolean;
  /**
   * Requests per second the load generator offers a target in all (warm-ups and measurements; priming
   * stays at full speed). Every target then serves the same load, so their CPU per request compares
   * work for equal work, without the difference a busier process makes to its own cost per request
   * (see "How it measures"). The req/s ratios are then the rate's, and no goal is judged.
   */
  readonly rate?: number;
  /** CI smoke mode: short runs, same checks. */
  readonly quick: boolean;
  /** JSON-RPC method the JSON-RPC scenarios call (`eth_chainId` or `eth_blockNumber`). */
  readonly method: string;
  /** Write a CPU profile of every Node server child and summarize it. */
  readonly profile: boolean;
  /** Where profiles go. */
  readonly profileDir: string;
  /** Only these targets (by name); all when undefined. */
  readonly targets?: readonly string[];
  /**
   * A built checkout of an earlier Tollgate (`--baseline <dir>`, with its own `node_modules` and `dist`):
   * scenarios that support it add a `gateway-before` target, the same server script run from there, so a
   * change is measured before and after in one run.
   */
  readonly baseline?: string;
}

/** A target as a scenario declares it: started only when selected. */
export interface TargetDefinition {
  /** Short name (table row, `--target`). */
  readonly name: string;
  /** One line on what it is. */
  readonly description: string;
  /** Starts it (a server child from {@link startServer}, or nothing for an upstream already running). */
  start(options: BenchOptions): Promise<StartedTarget>;
}

/** What starting a target gives. */
export interface StartedTarget {
  /** Base URL. */
  readonly url: string;
  /**
   * Several base URLs (several instances of one target): the load generator's connections go to them in
   * turn (round robin); `url` is then the first. Absent: every connection goes to `url`.
   */
  readonly urls?: readonly string[];
  /** The request to send and how to check its answers. */
  readonly request: LoadRequest;
  /** Processes whose CPU is the target's own (the server under test). */
  readonly serverPids: readonly number[];
  /** The server child, when the target started one (stopped, and its profile read, by the harness). */
  readonly server?: ServerHandle;
  /** Further server children of the target (its other instances), stopped and profiled like `server`. */
  readonly moreServers?: readonly ServerHandle[];
  /** See {@link Target.counters}. */
  readonly counters?: () => Promise<Readonly<Record<string, number>>>;
}

/** A target, ready to be loaded. */
export interface Target {
  /** Short name (table row). */
  readonly name: string;
  /** One line on what it is. */
  readonly description: string;
  /** Base URL. */
  readonly url: string;
  /** See {@link StartedTarget.urls}. */
  readonly urls?: readonly string[];
  /** The request to send and how to check its answers. */
  readonly request: LoadRequest;
  /** Processes whose CPU is the target's own (the server under test). */
  readonly serverPids: readonly number[];
  /**
   * Reads cumulative counters of something the target drives (say, the commands and CPU seconds of the
   * Redis it uses), by name. Read right before and right after every measurement: each counter's growth
   * divided by the correct answers is reported per call ({@link RoundResult.perCall}).
   */
  readonly counters?: () => Promise<Readonly<Record<string, number>>>;
  /** Called once, right before the target's first measurement (starts a requested profile). */
  readonly beforeFirstMeasurement?: () => void;
}

/** One measurement of a target. */
export interface RoundResult extends LoadResult {
  /** Round number, from 1. */
  readonly round: number;
  /** CPU cores the server used on average during the measurement (1.0 = one core busy). */
  readonly serverCores: number;
  /** CPU cores the shared upstream used. */
  readonly upstreamCores: number;
  /** CPU cores the load generator (this process) used. */
  readonly loadgenCores: number;
  /** Server CPU time per correct answer, microseconds. */
  readonly serverMicrosPerRequest: number;
  /** Its user-space part. */
  readonly serverUserMicrosPerRequest: number;
  /** Its kernel part. */
  readonly serverSystemMicrosPerRequest: number;
  /** Failed responses during the warm-up before this measurement (and the priming run, in round 1). */
  readonly warmupFailures: number;
  /** Responses during that warm-up. */
  readonly warmupResponses: number;
  /** Growth of each of the target's {@link Target.counters} during the measurement, per correct answer. */
  readonly perCall?: Readonly<Record<string, number>>;
}

/** A target's measurements and their medians. */
export interface TargetReport {
  readonly name: string;
  readonly description: string;
  readonly rounds: readonly RoundResult[];
  /** Median over rounds of correct answers per second. */
  readonly okPerSecond: number;
  /** Median over rounds of the p50 latency, ms. */
  readonly p50: number;
  /** Median over rounds of the p99 latency, ms. */
  readonly p99: number;
  /** Median server CPU per correct answer, µs. */
  readonly serverMicrosPerRequest: number;
  /** Median user-space server CPU per correct answer, µs. */
  readonly serverUserMicrosPerRequest: number;
  /** Median kernel server CPU per correct answer, µs. */
  readonly serverSystemMicrosPerRequest: number;
  /** Median server cores busy. */
  readonly serverCores: number;
  /** Median upstream cores busy. */
  readonly upstreamCores: number;
  /** Median load generator cores busy. */
  readonly loadgenCores: number;
  /** Median over rounds of each counter's growth per correct answer (targets with counters only). */
  readonly perCall?: Readonly<Record<string, number>>;
  /** Sums over all rounds. */
  readonly totals: { readonly responses: number; readonly ok: number; readonly non2xx: number; readonly badBody: number; readonly transportErrors: number; readonly warmupFailures: number };
  /** Examples of failed responses. */
  readonly samples: readonly string[];
}

/** A ratio between two targets, with an optional goal. */
export interface ComparisonSpec {
  /** Target whose throughput is divided. */
  readonly numerator: string;
  /** Target it is divided by. */
  readonly denominator: string;
  /** The ratio it must reach to PASS; informational when absent. */
  readonly goal?: number;
}

/** A computed comparison. */
export interface ComparisonReport extends ComparisonSpec {
  /** `numerator/denominator`. */
  readonly label: string;
  /** Median over rounds of the per-round throughput ratio (each round compares neighbours in time). */
  readonly ratio: number;
  /** Smallest and largest per-round ratio. */
  readonly range: readonly [number, number];
  /** Ratio of server CPU per request, denominator's over numerator's (above 1: the numerator is cheaper). */
  readonly cpuEfficiency: number;
  /** Median over rounds of the per-round p99 latency ratio, numerator's over denominator's (below 1: the numerator's tail is shorter). */
  readonly p99Ratio: number;
  /** PASS, MISS, or INFO when there is no goal. A ratio over a target with failures never passes. */
  readonly verdict: 'PASS' | 'MISS' | 'INFO';
  /** Why a ratio that reached its goal still does not pass. */
  readonly reason?: string;
  /**
   * Why the verdict is not to be trusted: rounds fell on both sides of the goal, or the CPU-per-request
   * ratio (the steadier number on a shared machine) lands on the other side of it.
   */
  readonly caveats: readonly string[];
}

/** The median of `values` (NaN for none). */
export function median(values: readonly number[]): number {
  const finite = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (finite.length === 0) return NaN;
  const mid = finite.length >> 1;
  return finite.length % 2 === 1 ? finite[mid]! : (finite[mid - 1]! + finite[mid]!) / 2;
}

/**
 * Spawns a Node server child (`bench/servers/<script>`). With `options.profile` set, it profiles its main
 * thread from the first measurement on and writes `<profileDir>/<name>.cpuprofile` when it stops.
 */
export function startServer(name: string, script: string, args: Record<string, string>, options: BenchOptions, cwd?: string): Promise<ServerHandle> {
  const env: Record<string, string> = {};
  if (options.profile) {
    mkdirSync(options.profileDir, { recursive: true });
    env.BENCH_CPU_PROFILE = profilePath(name, options);
  }
  const argv = Object.entries(args).map(([key, value]) => `--${key}=${value}`);
  return spawnServer(name, script, { args: argv, env, cwd });
}

/** Where the profile of server `name` is written. */
export function profilePath(name: string, options: BenchOptions): string {
  return join(options.profileDir, `${name}.cpuprofile`);
}

function fmt(n: number, digits = 0): string {
  return Number.isFinite(n) ? n.toFixed(digits) : '-';
}

/**
 * Measures every target in `rounds` interleaved rounds (A B C D, A B C D, ...), each measurement after
 * its own warm-up, so slow drift (thermal, other tenants) spreads over all targets alike. Before the first
 * round every target is primed: a JIT needs far more than a 2 s warm-up to settle on a gateway's code.
 */
export async function measureTargets(
  targets: readonly Target[],
  options: BenchOptions,
  upstreamPids: readonly number[],
  /** The run's rounds, when these are a part of them (`fresh`: one round a call): numbers and log lines. */
  of: { readonly first: number; readonly total: number } = { first: 1, total: options.rounds },
): Promise<TargetReport[]> {
  const results = new Map<string, RoundResult[]>(targets.map((t) => [t.name, []]));
  const log = (line: string): void => void process.stderr.write(`${line}\n`);
  // `rate` undefined is full speed (priming), so every call names its rate.
  const load = (target: Target, duration: number, rate: number | undefined): Promise<LoadResult> =>
    runLoad({ url: target.urls ?? target.url, request: target.request, connections: options.connections, duration, ...(rate === undefined ? {} : { rate }) });
  const primeFailures = new Map<string, number>();
  if (options.prime > 0) {
    log(`[bench] priming every target for ${options.prime} s (not measured)`);
    for (const target of targets) primeFailures.set(target.name, failures(await load(target, options.prime, undefined)));
  }
  for (let round = of.first; round < of.first + options.rounds; round++) {
    for (const target of targets) {
      let warmupFailures = round === of.first ? (primeFailures.get(target.name) ?? 0) : 0;
      let warmupResponses = 0;
      if (options.warmup > 0) {
        const warm = await load(target, options.warmup, options.rate);
        warmupFailures += failures(warm);
        warmupResponses = warm.responses;
      }
      if (round === of.first) target.beforeFirstMeasurement?.();
      const serverBefore = totalCpuTime(target.serverPids);
      const upstreamBefore = totalCpuTime(upstreamPids);
      const countersBefore = await target.counters?.();
      const ownBefore = ownCpuTime();
      const result = await load(target, options.duration, options.rate);
      const server = cpuDelta(serverBefore, totalCpuTime(target.serverPids));
      const upstream = cpuDelta(upstreamBefore, totalCpuTime(upstreamPids));
      const own = cpuDelta(ownBefore, ownCpuTime());
      const countersAfter = await target.counters?.();
      const perRequest = (seconds: number): number => (result.ok > 0 ? (seconds / result.ok) * 1e6 : NaN);
      const perCall = countersBefore === undefined || countersAfter === undefined
        ? undefined
        : Object.fromEntries(Object.entries(countersAfter).map(([name, value]) => [name, result.ok > 0 ? (value - (countersBefore[name] ?? 0)) / result.ok : NaN]));
      const measured: RoundResult = {
        ...result,
        round,
        serverCores: (server.user + server.system) / result.seconds,
        upstreamCores: (upstream.user + upstream.system) / result.seconds,
        loadgenCores: (own.user + own.system) / result.seconds,
        serverMicrosPerRequest: perRequest(server.user + server.system),
        serverUserMicrosPerRequest: perRequest(server.user),
        serverSystemMicrosPerRequest: perRequest(server.system),
        warmupFailures,
        warmupResponses,
        ...(perCall === undefined ? {} : { perCall }),
      };
      results.get(target.name)!.push(measured);
      const bad = failures(result);
      log(
        `[bench] round ${round}/${of.total} ${target.name.padEnd(14)} ${fmt(result.okPerSecond).padStart(6)} req/s  p50 ${fmt(result.latency.p50, 2)} ms  p99 ${fmt(result.latency.p99, 2)} ms  ` +
          `server ${fmt(measured.serverCores * 100)}% cpu, ${fmt(measured.serverMicrosPerRequest)} us/req${bad > 0 ? `  FAILURES ${bad}` : ''}${warmupFailures > 0 ? `  (warm-up failures ${warmupFailures})` : ''}`,
      );
    }
  }
  return targets.map((target) => summarize(target.name, target.description, results.get(target.name)!));
}

/** A target's report from its rounds: medians of the per-round figures, sums of the counts. */
export function summarize(name: string, description: string, rounds: readonly RoundResult[]): TargetReport {
  const sum = (pick: (r: RoundResult) => number): number => rounds.reduce((acc, r) => acc + pick(r), 0);
  const mid = (pick: (r: RoundResult) => number): number => median(rounds.map(pick));
  const counterNames = [...new Set(rounds.flatMap((r) => Object.keys(r.perCall ?? {})))];
  return {
    name,
    description,
    rounds,
    okPerSecond: mid((r) => r.okPerSecond),
    p50: mid((r) => r.latency.p50),
    p99: mid((r) => r.latency.p99),
    serverMicrosPerRequest: mid((r) => r.serverMicrosPerRequest),
    serverUserMicrosPerRequest: mid((r) => r.serverUserMicrosPerRequest),
    serverSystemMicrosPerRequest: mid((r) => r.serverSystemMicrosPerRequest),
    serverCores: mid((r) => r.serverCores),
    upstreamCores: mid((r) => r.upstreamCores),
    loadgenCores: mid((r) => r.loadgenCores),
    ...(counterNames.length === 0 ? {} : { perCall: Object.fromEntries(counterNames.map((name) => [name, mid((r) => r.perCall?.[name] ?? NaN)])) }),
    totals: {
      responses: sum((r) => r.responses),
      ok: sum((r) => r.ok),
      non2xx: sum((r) => r.non2xx),
      badBody: sum((r) => r.badBody),
      transportErrors: sum((r) => r.transportErrors),
      warmupFailures: sum((r) => r.warmupFailures),
    },
    samples: [...new Set(rounds.flatMap((r) => r.samples))].slice(0, 3),
  };
}

/** Total failures of a target over all measured rounds. */
export function targetFailures(target: TargetReport): number {
  return target.totals.non2xx + target.totals.badBody + target.totals.transportErrors;
}

/** Below this share of a fixed rate a target did not keep up: its CPU per request is a saturated one's. */
const SERVED_RATE_SHARE = 0.97;

/**
 * Computes the comparisons between measured targets (skipping those with a target that was not run).
 * Under a fixed `rate` no goal is judged (both sides served the rate: their req/s ratio is about 1 by
 * construction); the CPU/req and p99 ratios are the comparison, and a target that fell short of the
 * rate says so.
 */
export function compare(targets: readonly TargetReport[], specs: readonly ComparisonSpec[], rate?: number): ComparisonReport[] {
  const byName = new Map(targets.map((t) => [t.name, t]));
  return specs.filter((spec) => byName.has(spec.numerator) && byName.has(spec.denominator)).map((spec) => {
    const a = byName.get(spec.numerator);
    const b = byName.get(spec.denominator);
    if (a === undefined || b === undefined) throw new Error(`comparison ${spec.numerator}/${spec.denominator}: unknown target`);
    const perRound = a.rounds.map((r, i) => r.okPerSecond / (b.rounds[i]?.okPerSecond ?? NaN)).filter((v) => Number.isFinite(v));
    const ratio = median(perRound);
    const label = `${spec.numerator}/${spec.denominator}`;
    const range: [number, number] = perRound.length === 0 ? [NaN, NaN] : [Math.min(...perRound), Math.max(...perRound)];
    const cpuEfficiency = b.serverMicrosPerRequest / a.serverMicrosPerRequest;
    const p99Ratio = median(a.rounds.map((r, i) => r.latency.p99 / (b.rounds[i]?.latency.p99 ?? NaN)));
    if (rate !== undefined) {
      const short = [a, b].filter((t) => t.okPerSecond < SERVED_RATE_SHARE * rate).map((t) => `${t.name} served ${Math.round(t.okPerSecond)} req/s of ${rate}`);
      return { ...spec, label, ratio, range, cpuEfficiency, p99Ratio, verdict: 'INFO' as const, reason: 'fixed rate: read the CPU/req ratio', caveats: short };
    }
    if (spec.goal === undefined) return { ...spec, label, ratio, range, cpuEfficiency, p99Ratio, verdict: 'INFO' as const, caveats: [] };
    const goal = spec.goal;
    const caveats: string[] = [];
    if (range[0] < goal && range[1] >= goal) caveats.push('rounds on both sides of the goal');
    if (Number.isFinite(cpuEfficiency) && ratio >= goal !== cpuEfficiency >= goal) caveats.push(`CPU/req ratio ${cpuEfficiency.toFixed(2)} says ${cpuEfficiency >= goal ? 'PASS' : 'MISS'}`);
    const broken = [a, b].filter((t) => targetFailures(t) > 0).map((t) => t.name);
    if (broken.length > 0) return { ...spec, label, ratio, range, cpuEfficiency, p99Ratio, verdict: 'MISS' as const, reason: `failed responses from ${broken.join(', ')}`, caveats };
    return { ...spec, label, ratio, range, cpuEfficiency, p99Ratio, verdict: ratio >= goal ? ('PASS' as const) : ('MISS' as const), caveats };
  });
}

/** A path relative to the repository root, for messages. */
export function shown(path: string): string {
  return relative(REPO_ROOT, path) || '.';
}

/** What {@link runTargets} measured. */
export interface TargetsOutcome {
  readonly targets: readonly TargetReport[];
  readonly comparisons: readonly ComparisonReport[];
  /** Profile summaries of the Node server targets (with `--profile`). */
  readonly profiles?: Readonly<Record<string, ProfileSummary>>;
  /** The harness started the targets and drove their load, so `--fresh` and `--rate` applied. */
  readonly drivenByHarness: true;
}

/**
 * The usual body of a scenario: starts the selected targets one after the other (parallel start-ups
 * would fight for the cores), measures them, compares them, stops them (also on failure) and reads their
 * profiles. With `fresh`, the targets are started, primed, measured for one round and stopped again for
 * every round, and the rounds summarized as one run's.
 */
export async function runTargets(
  definitions: readonly TargetDefinition[],
  comparisons: readonly ComparisonSpec[],
  options: BenchOptions,
  upstreamPids: readonly number[],
  /** Runs for each measured target before the servers stop (to read what a server reports about itself). */
  beforeStop?: (name: string) => Promise<void>,
): Promise<TargetsOutcome> {
  const unknown = (options.targets ?? []).filter((name) => !definitions.some((d) => d.name === name));
  if (unknown.length > 0) throw new Error(`unknown target ${unknown.join(', ')} (known: ${definitions.map((d) => d.name).join(', ')})`);
  const selected = definitions.filter((d) => options.targets === undefined || options.targets.includes(d.name));
  // One start of the targets for all rounds, or (`fresh`) one start a round: the same loop either way.
  const roundsPerStart = options.fresh === true ? 1 : options.rounds;
  const rounds = new Map<string, RoundResult[]>(selected.map((d) => [d.name, []]));
  let profiles: Record<string, ProfileSummary> | undefined;
  for (let first = 1; first <= options.rounds; first += roundsPerStart) {
    const servers: ServerHandle[] = [];
    // Which target each server child belongs to, and how many children share the target's load.
    const owners = new Map<ServerHandle, { target: string; share: number }>();
    try {
      const targets = await startTargets(selected, options, servers, owners);
      const measured = await measureTargets(targets, { ...options, rounds: roundsPerStart }, upstreamPids, { first, total: options.rounds });
      for (const report of measured) rounds.get(report.name)!.push(...report.rounds);
      const last = first + roundsPerStart > options.rounds;
      if (last && beforeStop !== undefined) for (const target of targets) await beforeStop(target.name);
      // Servers write their profiles as they stop (`--profile` is refused with `fresh`: one start).
      await Promise.all(servers.map((s) => s.stop()));
      if (options.profile) profiles = profilesOf(servers, owners, measured, options);
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
    }
  }
  const measured = selected.map((d) => summarize(d.name, d.description, rounds.get(d.name)!));
  return {
    targets: measured,
    comparisons: compare(measured, comparisons, options.rate),
    ...(profiles === undefined ? {} : { profiles }),
    drivenByHarness: true,
  };
}

/** The profile summaries of `servers`, each with the requests it served (the profile runs from the first measurement on). */
function profilesOf(
  servers: readonly ServerHandle[],
  owners: ReadonlyMap<ServerHandle, { target: string; share: number }>,
  measured: readonly TargetReport[],
  options: BenchOptions,
): Record<string, ProfileSummary> {
  const profiles: Record<string, ProfileSummary> = {};
  for (const server of servers) {
    // Later rounds' warm-ups are in the profile too.
    const owner = owners.get(server);
    const rounds = measured.find((t) => t.name === owner?.target)?.rounds ?? [];
    // Several instances of a target share its load about evenly (round robin over their URLs).
    const requests = rounds.reduce((sum, r, i) => sum + r.responses + (i > 0 ? r.warmupResponses : 0), 0) / (owner?.share ?? 1);
    const file = profilePath(server.name, options);
    const allocations = existsSync(heapProfilePath(file)) ? { allocations: summarizeAllocations(heapProfilePath(file)) } : {};
    profiles[server.name] = { ...summarizeProfile(file), ...allocations, requests };
  }
  return profiles;
}

/**
 * Starts `selected` one after the other, recording each server child in `servers` and its target (and
 * how many children share that target's load) in `owners`, so the caller stops them whatever happens.
 */
async function startTargets(
  selected: readonly TargetDefinition[],
  options: BenchOptions,
  servers: ServerHandle[],
  owners: Map<ServerHandle, { target: string; share: number }>,
): Promise<Target[]> {
  const targets: Target[] = [];
  for (const definition of selected) {
    const started = await definition.start(options);
    const own = [...(started.server === undefined ? [] : [started.server]), ...(started.moreServers ?? [])];
    for (const server of own) {
      servers.push(server);
      owners.set(server, { target: definition.name, share: own.length });
    }
    targets.push({
      name: definition.name,
      description: definition.description,
      url: started.url,
      ...(started.urls === undefined ? {} : { urls: started.urls }),
      request: started.request,
      serverPids: started.serverPids,
      ...(started.counters === undefined ? {} : { counters: started.counters }),
      ...(options.profile && own.length > 0 ? { beforeFirstMeasurement: () => own.forEach((server) => server.signal('SIGUSR2')) } : {}),
    });
  }
  return targets;
}
