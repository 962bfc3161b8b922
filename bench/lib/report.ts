/** Renders scenario reports as the table `npm run bench` prints. */
import { formatProfile } from './cpuprofile.js';
import { targetFailures, type BenchOptions, type TargetReport } from './harness.js';
import type { ScenarioReport } from './scenario.js';

function num(n: number, digits = 0): string {
  return Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : '-';
}

function table(headers: readonly string[], rows: readonly (readonly string[])[], alignLeft: readonly number[] = [0]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]): string =>
    cells.map((c, i) => (alignLeft.includes(i) ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

function failureDetail(t: TargetReport): string | undefined {
  const total = targetFailures(t);
  if (total === 0 && t.totals.warmupFailures === 0) return undefined;
  const parts = [`non-2xx ${t.totals.non2xx}`, `bad body ${t.totals.badBody}`, `connection errors/timeouts ${t.totals.transportErrors}`];
  if (t.totals.warmupFailures > 0) parts.push(`during warm-ups ${t.totals.warmupFailures}`);
  const lines = [`  ${t.name}: ${parts.join(', ')} (of ${num(t.totals.responses)} responses)`];
  for (const s of t.samples) lines.push(`      e.g. ${s}`);
  return lines.join('\n');
}

/** The settings line printed above every scenario's table. */
export function settingsLine(options: BenchOptions, cpus: number, drivenByHarness: boolean): string {
  const mode = options.quick ? 'quick mode: ' : '';
  const s = (n: number): string => `${num(n, n % 1 === 0 ? 0 : 1)} s`;
  const warm = options.warmup > 0 ? ` after ${s(options.warmup)} warm-up each` : ', no warm-up';
  const prime = options.prime > 0 ? `, every target primed for ${s(options.prime)} first` : '';
  const anew = drivenByHarness && options.fresh === true ? ' (every round on newly started servers, primed again)' : '';
  const offered = drivenByHarness && options.rate !== undefined ? ` offering ${num(options.rate)} req/s in all` : '';
  return `${mode}${options.connections} connections${offered}, ${options.rounds} round(s)${anew} x ${s(options.duration)} per target${warm}${prime}, ` +
    `method ${options.method}, ${cpus} CPUs, Node ${process.version}`;
}

/** The printed report of one scenario. */
export function formatScenario(report: ScenarioReport, options: BenchOptions, cpus: number): string {
  const out: string[] = [];
  out.push(`== ${report.scenario}: ${report.description}`);
  const drivenByHarness = report.drivenByHarness === true;
  out.push(settingsLine(options, cpus, drivenByHarness));
  if (options.fresh === true && !drivenByHarness) out.push('--fresh: this scenario starts its own servers once; they ran through every round');
  if (options.rate !== undefined && !drivenByHarness) out.push('--rate: this scenario drives its own load, as fast as its targets answer');
  out.push('');
  // Per-call counters some targets report (say, Redis commands per call), one column each, after the usual ones.
  const counters = [...new Set(report.targets.flatMap((t) => Object.keys(t.perCall ?? {})))];
  out.push(
    table(
      ['target', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'server CPU', 'CPU us/req (usr+sys)', 'upstream CPU', 'loadgen CPU', ...counters],
      report.targets.map((t) => [
        t.name,
        num(t.okPerSecond),
        num(t.p50, 2),
        num(t.p99, 2),
        num(targetFailures(t)),
        `${num(t.serverCores * 100)}%`,
        `${num(t.serverMicrosPerRequest)} (${num(t.serverUserMicrosPerRequest)}+${num(t.serverSystemMicrosPerRequest)})`,
        t.name === 'direct' ? '(=server)' : `${num(t.upstreamCores * 100)}%`,
        `${num(t.loadgenCores * 100)}%`,
        ...counters.map((name) => num(t.perCall?.[name] ?? NaN, 2)),
      ]),
    ),
  );
  const details = report.targets.map(failureDetail).filter((d): d is string => d !== undefined);
  if (details.length > 0) out.push('', 'FAILED RESPONSES (not counted in req/s):', ...details);
  if (report.comparisons.length > 0) {
    out.push('');
    out.push(
      table(
        ['ratio', 'req/s ratio', 'per-round range', 'CPU/req ratio', 'p99 ratio', 'goal', 'verdict'],
        report.comparisons.map((c) => [
          c.label,
          num(c.ratio, 3),
          `${num(c.range[0], 3)} - ${num(c.range[1], 3)}`,
          num(c.cpuEfficiency, 3),
          num(c.p99Ratio, 2),
          c.goal === undefined ? '-' : `>= ${num(c.goal, 2)}`,
          [c.verdict, ...(c.reason === undefined ? [] : [`(${c.reason})`]), ...(c.caveats.length === 0 ? [] : [`(unsure: ${c.caveats.join('; ')})`])].join(' '),
        ]),
      ),
    );
  }
  if (report.notes.length > 0) out.push('', ...report.notes.map((n) => `note: ${n}`));
  for (const [name, summary] of Object.entries(report.profiles ?? {})) out.push('', formatProfile(`profile of ${name}`, summary));
  return out.join('\n');
}
