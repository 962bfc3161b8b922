/**
 * `npm run bench [-- options]`: runs the scenarios of `bench/scenarios/`, prints a table per scenario and
 * writes everything measured to `bench/results/latest.json`. See bench/README.md.
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { cpus as cpuInfo, loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { cpuCount } from './lib/cpu.js';
import { shown, type BenchOptions } from './lib/harness.js';
import { installExitHandlers, stopAll } from './lib/processes.js';
import { formatScenario } from './lib/report.js';
import type { Scenario, ScenarioReport } from './lib/scenario.js';

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));

const HELP = `Usage: npm run bench -- [options]

  --scenario <name>     run only this scenario (repeatable; default: all)
  --target <name>       measure only this target (repeatable or comma-separated; default: all)
  --list                list the scenarios and their targets, and exit
  --quick               CI smoke run: 1 round of 2 s per target, 1 s priming, 0.5 s warm-up, 32 connections
  --duration <s>        measured seconds per target per round    (env BENCH_DURATION,    default 8)
  --warmup <s>          warm-up seconds before each measurement  (env BENCH_WARMUP,      default 2)
  --prime <s>           load on each target before round 1       (env BENCH_PRIME,       default 8)
  --connections <n>     concurrent connections                   (env BENCH_CONNECTIONS, default 48)
  --rounds <n>          interleaved rounds (A B C D A B C D ...) (env BENCH_ROUNDS,      default 3)
  --fresh               start every target again for each round, primed again (env BENCH_FRESH=1):
                        each round on new server processes, so one process's luck is one round
  --rate <req/s>        offer every target this many requests a second in all, to compare CPU per request
                        at equal load (env BENCH_RATE; default: as fast as the connections get answers)
  --method <name>       JSON-RPC method: eth_chainId | eth_blockNumber (env BENCH_METHOD, default eth_chainId)
  --profile             CPU-profile the Node servers while measured; print where their time goes
  --json <file>         where to write the results (default bench/results/latest.json)
  --baseline <dir>      a built checkout of an earlier Tollgate: http-instant and http-json-rpc add its gateway as
                        gateway-before, cache-hit its cached gateway as gateway-cache-hit-before
  --strict              exit 1 when a ratio misses its goal (default: only failed responses fail the run)
  -h, --help            this text

Flags win over environment variables, which win over --quick's values.`;

function fail(message: string): never {
  process.stderr.write(`bench: ${message}\n\n${HELP}\n`);
  process.exit(2);
}

function numberOption(name: string, flag: string | undefined, env: string | undefined, fallback: number, integer: boolean): number {
  const raw = flag ?? (env === undefined || env === '' ? undefined : env);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || (integer && !Number.isInteger(value))) fail(`--${name} must be a ${integer ? 'whole ' : ''}number >= 0 (got ${raw})`);
  return value;
}

/** `--rate 0` (the default) is no rate: as fast as the connections get answers. */
function rateOption(rate: number): { rate?: number } {
  return rate === 0 ? {} : { rate };
}

async function loadScenarios(): Promise<Scenario[]> {
  const dir = join(BENCH_DIR, 'scenarios');
  const files = readdirSync(dir).filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')).sort();
  const scenarios: Scenario[] = [];
  for (const file of files) {
    const module = (await import(pathToFileURL(join(dir, file)).href)) as { default?: Scenario };
    if (module.default === undefined || typeof module.default.run !== 'function') fail(`bench/scenarios/${file} has no default-exported scenario`);
    scenarios.push(module.default);
  }
  return scenarios;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      scenario: { type: 'string', multiple: true },
      target: { type: 'string', multiple: true },
      list: { type: 'boolean', default: false },
      quick: { type: 'boolean', default: false },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      prime: { type: 'string' },
      connections: { type: 'string' },
      rounds: { type: 'string' },
      fresh: { type: 'boolean', default: false },
      rate: { type: 'string' },
      method: { type: 'string' },
      profile: { type: 'boolean', default: false },
      json: { type: 'string' },
      baseline: { type: 'string' },
      strict: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }

  const all = await loadScenarios();
  if (values.list) {
    for (const s of all) process.stdout.write(`${s.name.padEnd(20)} ${s.description}\n${' '.repeat(21)}targets: ${s.targets.join(', ')}\n`);
    return 0;
  }
  const wanted = values.scenario ?? [];
  const unknown = wanted.filter((name) => !all.some((s) => s.name === name));
  if (unknown.length > 0) fail(`unknown scenario ${unknown.join(', ')} (known: ${all.map((s) => s.name).join(', ')})`);
  let scenarios = wanted.length === 0 ? all : all.filter((s) => wanted.includes(s.name));
  const targets = values.target?.flatMap((t) => t.split(',')).map((t) => t.trim()).filter((t) => t !== '');
  if (targets !== undefined) {
    const strangers = targets.filter((t) => !scenarios.some((s) => s.targets.includes(t)));
    if (strangers.length > 0) fail(`unknown target ${strangers.join(', ')} (known: ${[...new Set(scenarios.flatMap((s) => s.targets))].join(', ')})`);
    scenarios = scenarios.filter((s) => s.targets.some((t) => targets.includes(t)));
  }

  const quick = values.quick;
  const env = process.env;
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const options: BenchOptions = {
    quick,
    duration: numberOption('duration', values.duration, env.BENCH_DURATION, quick ? 2 : 8, false),
    warmup: numberOption('warmup', values.warmup, env.BENCH_WARMUP, quick ? 0.5 : 2, false),
    prime: numberOption('prime', values.prime, env.BENCH_PRIME, quick ? 1 : 8, false),
    connections: numberOption('connections', values.connections, env.BENCH_CONNECTIONS, quick ? 32 : 48, true),
    rounds: numberOption('rounds', values.rounds, env.BENCH_ROUNDS, quick ? 1 : 3, true),
    fresh: values.fresh || env.BENCH_FRESH === '1',
    ...rateOption(numberOption('rate', values.rate, env.BENCH_RATE, 0, false)),
    method: values.method ?? (env.BENCH_METHOD || 'eth_chainId'),
    profile: values.profile,
    profileDir: join(BENCH_DIR, 'results', 'profiles', stamp),
    baseline: values.baseline === undefined ? undefined : resolve(values.baseline),
  };
  if (options.baseline !== undefined && !existsSync(join(options.baseline, 'dist'))) fail(`--baseline ${options.baseline}: no dist/ there (clone, npm install and npm run build it first)`);
  if (options.duration <= 0) fail('--duration must be > 0');
  if (options.connections < 1) fail('--connections must be >= 1');
  if (options.rounds < 1) fail('--rounds must be >= 1');
  if (options.fresh === true && options.profile) fail('--fresh and --profile do not go together: a profile covers one server process');
  const jsonPath = resolve(values.json ?? join(BENCH_DIR, 'results', 'latest.json'));

  installExitHandlers(() => stopAll());

  const cpus = cpuCount();
  const loadBefore = loadavg()[0]!;
  const reports: ScenarioReport[] = [];
  let broken = false;
  let missed = false;
  for (const scenario of scenarios) {
    process.stderr.write(`[bench] ${scenario.name}: starting\n`);
    const report = await scenario.run(targets === undefined ? options : { ...options, targets: targets.filter((t) => scenario.targets.includes(t)) });
    reports.push(report);
    process.stdout.write(`\n${formatScenario(report, options, cpus)}\n`);
    if (report.targets.some((t) => t.totals.non2xx + t.totals.badBody + t.totals.transportErrors > 0)) broken = true;
    if (report.comparisons.some((c) => c.verdict === 'MISS')) missed = true;
  }

  // The bench's own processes count in the load average too; a value well above ~3 on 2 cores while it
  // ran means other work competed with it.
  const loadAfter = loadavg()[0]!;
  process.stdout.write(`\nload average (1 min): ${loadBefore.toFixed(2)} before, ${loadAfter.toFixed(2)} after, on ${cpus} CPUs\n`);
  mkdirSync(dirname(jsonPath), { recursive: true });
  const environment = {
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    cpus,
    cpuModel: cpuInfo()[0]?.model ?? 'unknown',
    loadAverage: { before: loadBefore, after: loadAfter },
  };
  writeFileSync(jsonPath, `${JSON.stringify({ finishedAt: new Date().toISOString(), options, environment, scenarios: reports }, null, 2)}\n`);
  process.stdout.write(`results: ${shown(jsonPath)}${options.profile ? `; profiles: ${shown(options.profileDir)}` : ''}\n`);

  if (broken) {
    process.stderr.write('bench: some responses failed (see FAILED RESPONSES above)\n');
    return 1;
  }
  if (missed && values.strict) {
    process.stderr.write('bench: a ratio missed its goal (--strict)\n');
    return 1;
  }
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  async (error: unknown) => {
    process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    await stopAll();
    process.exitCode = 1;
  },
);
