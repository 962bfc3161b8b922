import type { DependencyContainer } from 'tsyringe';
import type { Logger } from 'pino';
import type { Stage } from './stage-runner.js';
import type { GatewayConfig } from '../config/types.js';
import type { PlanLookup } from '../keys/plan-book.js';
import type { KeyStore } from '../keys/keys.js';
import type { CreditLedger } from '../metering/credit-ledger.js';
import type { RateLimiter } from '../metering/rate-limiter.js';
import type { Clock } from '../util/clock.js';
import type { UpstreamSelector } from '../upstream/selector.js';

export { step, stepFunctionOf, type Stage, type StepFunction } from './stage-runner.js';
export { isPromise } from '../util/maybe-promise.js';

/** The names of the core's stages, in pipeline order. */
export const CORE_STAGES = ['authenticate', 'validate', 'meter', 'enforceLimits', 'route', 'dispatch', 'checkResult'] as const;

/** The name of a core stage. */
export type CoreStageName = (typeof CORE_STAGES)[number];

/** What stage factories receive: the gateway's services, resolved from its container. */
export interface StageDependencies {
  /** The resolved config. */
  readonly config: GatewayConfig;
  /** The gateway's container, for plugin-specific services. */
  readonly container: DependencyContainer;
  /** Key lookup. */
  readonly keys: KeyStore;
  /** Plan lookup: the config's plans and the managed ones (default: the config's only). */
  readonly plans?: PlanLookup;
  /** Credit balances. */
  readonly ledger: CreditLedger;
  /** Throughput limits. */
  readonly limiter: RateLimiter;
  /** Upstream choice. */
  readonly selector: UpstreamSelector;
  /** Time. */
  readonly clock: Clock;
  /** Logs. */
  readonly logger: Logger;
}

/**
 * A stage contributed by a plugin, placed relative to a core stage (or another plugin stage).
 *
 * @example
 * ```ts
 * const allowlist: StageDefinition = {
 *   name: 'allowlist',
 *   after: 'validate', // before `meter`, so a refused call costs nothing
 *   create: () => step((ctx) => { if (!allowed(ctx)) throw new GatewayError(Errors.FORBIDDEN); }),
 * };
 * ```
 */
export interface StageDefinition {
  /** Unique stage name. */
  readonly name: string;
  /** Insert right before this stage. */
  readonly before?: string;
  /** Insert right after this stage. */
  readonly after?: string;
  /**
   * The network families whose calls this stage concerns (a call runs it when its network has one of
   * them). Absent: every family. Read once, when the gateway is assembled (after every plugin
   * registered), so a plugin may compute it from what other plugins registered.
   */
  readonly families?: readonly string[];
  /**
   * The transports whose calls this stage concerns (`ws`, `http`, ...). Absent: every transport. A call
   * runs a stage only when both its network's families and its transport match.
   */
  readonly transports?: readonly string[];
  /** Builds the operator once, when the gateway is assembled. */
  create(deps: StageDependencies): Stage;
}
