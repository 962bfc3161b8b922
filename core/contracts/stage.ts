import type { DependencyContainer } from 'tsyringe';
import type { Logger } from 'pino';
import type { OperatorFunction } from 'rxjs';
import type { RequestContext } from './request-context.js';
import type { MaybePromise } from '../util/maybe-promise.js';
import type { GatewayConfig } from '../config/types.js';
import type { KeyStore, PlanLookup } from './keys.js';
import type { CreditLedger } from './credit-ledger.js';
import type { RateLimiter } from './rate-limiter.js';
import type { Clock } from '../util/clock.js';
import type { UpstreamSelector } from './selector.js';

/**
 * A pipeline stage: an RxJS operator over contexts. A stage fails a call by emitting a `GatewayError`.
 *
 * The pipeline applies a stage to each call on its own: the operator's source emits that call's context
 * once and completes, so `retry` re-runs only this stage's own work and `timeout` bounds only it. The
 * operator must emit that same context exactly once; emitting nothing, twice or another object fails the
 * call with `STAGE_CONTRACT_VIOLATED` instead of leaving the client without an answer, or with two. Both
 * the gateway's run and the composed form (`stagesOf` closed with `settleCall`) check it where the stage
 * runs, so the call fails there, before any later stage (dispatch, the node) runs.
 */
export type Stage = OperatorFunction<RequestContext, RequestContext>;

/** The function behind a stage built with {@link step}, so the pipeline can run such stages in one loop. */
export type StepFunction = (ctx: RequestContext) => MaybePromise<void>;

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
