import type { GatewayConfig, HedgeConfig, NetworkConfig } from '../config/types.js';
import type { RequestContext } from '../contracts/request-context.js';
import type { CircuitBreakerSettings } from './circuit-breaker.js';

/** Active probe settings of a network. */
export interface ProbeSettings {
  /** Time between probes of each upstream, ms; 0: no active probes. */
  readonly intervalMs: number;
  /** Timeout of one probe, ms. */
  readonly timeoutMs: number;
}

/** The failover settings of one network: the config's top-level `failover` with the network's own fields over it. */
export interface FailoverSettings {
  /** Primaries tried per call (partners, when eligible, come after them). */
  readonly maxAttempts: number;
  /** Overall time for all attempts of one call, ms. */
  readonly deadlineMs: number;
  /** A primary more than this many blocks behind the highest head of the live primaries gets no traffic. */
  readonly maxLagBlocks: number;
  /** Circuit breaker settings of every upstream. */
  readonly breaker: CircuitBreakerSettings;
  /** Active probes. */
  readonly probe: ProbeSettings;
  /** How long an upstream that answered "method not found" for a method is skipped for it, ms; 0: never. */
  readonly methodBanMs: number;
  /** Hedged reads. */
  readonly hedge: Readonly<HedgeConfig>;
  /** Methods that may go to a partner; undefined: the family's `failover` flag decides. */
  readonly methods: ReadonlySet<string> | undefined;
  /** Plans whose calls may go to a partner; undefined: the plan's `failover` flag decides. */
  readonly plans: ReadonlySet<string> | undefined;
}

/** Resolves the failover settings of `network` from the gateway config. */
export function resolveFailoverSettings(config: GatewayConfig, network: NetworkConfig): FailoverSettings {
  const top = config.failover;
  const own = network.failover ?? {};
  const methods = own.methods ?? top.methods;
  const plans = own.plans ?? top.plans;
  return Object.freeze({
    maxAttempts: own.maxAttempts ?? top.maxAttempts,
    deadlineMs: own.deadlineMs ?? top.deadlineMs,
    maxLagBlocks: own.maxLagBlocks ?? top.maxLagBlocks,
    breaker: Object.freeze({ ...top.breaker, ...own.breaker }),
    probe: Object.freeze({ ...top.probe, ...own.probe }),
    methodBanMs: own.methodBanMs ?? top.methodBanMs,
    hedge: Object.freeze({ ...top.hedge, ...own.hedge }),
    methods: methods === undefined ? undefined : new Set(methods),
    plans: plans === undefined ? undefined : new Set(plans),
  });
}

/**
 * Whether a call may go to a partner provider: its method and its key's plan must both be eligible
 * (by default, the method's `failover` flag in its family and the plan's `failover` flag; the
 * settings' `methods` and `plans` lists replace them when set).
 */
export function failoverEligible(settings: FailoverSettings, ctx: RequestContext): boolean {
  const method = ctx.method;
  const plan = ctx.plan;
  if (method === undefined || plan === undefined) return false;
  const methodOk = settings.methods === undefined ? method.failover === true : settings.methods.has(method.name);
  if (!methodOk) return false;
  return settings.plans === undefined ? plan.failover === true : settings.plans.has(plan.name);
}
