/**
 * The contract of a scenario file (`bench/scenarios/<name>.ts`): a default export that starts its own
 * servers, measures its targets with the shared harness, stops everything it started, and returns a
 * report the runner prints and saves.
 */
import type { BenchOptions, ComparisonReport, TargetReport } from './harness.js';
import type { ProfileSummary } from './cpuprofile.js';

/** What a scenario returns. */
export interface ScenarioReport {
  /** Scenario name. */
  readonly scenario: string;
  /** What it measures. */
  readonly description: string;
  /** The targets, in measurement order. */
  readonly targets: readonly TargetReport[];
  /** Ratios between targets, with goals. */
  readonly comparisons: readonly ComparisonReport[];
  /** Facts worth printing under the table (request, upstream, versions). */
  readonly notes: readonly string[];
  /** CPU profile summaries by target (with `--profile`). */
  readonly profiles?: Readonly<Record<string, ProfileSummary>>;
  /**
   * True when the shared harness (`runTargets`) started the targets and drove their load, so `--fresh`
   * and `--rate` applied; a scenario with a load of its own starts its servers once and runs at full speed.
   */
  readonly drivenByHarness?: boolean;
}

/** A scenario. */
export interface Scenario {
  /** Name (`--scenario <name>`); by convention the file's name. */
  readonly name: string;
  /** One line on what it compares. */
  readonly description: string;
  /** Its target names (for `--list` and `--target`). */
  readonly targets: readonly string[];
  /** Runs it. Must stop every process it started, also when it fails. */
  run(options: BenchOptions): Promise<ScenarioReport>;
}
