import type { RequestContext } from './request-context.js';
import type { Network } from './request-context.js';
import type { Upstream } from './upstream.js';
import type { UpstreamFailure } from './upstream-failure.js';

/** What operators see of one upstream (served by an admin endpoint, exported as metrics). */
export interface UpstreamStatus {
  /** The upstream's name. */
  readonly name: string;
  /** Its network. */
  readonly network: string;
  /** Primary or partner. */
  readonly role: 'primary' | 'partner';
  /** Whether the selector currently sends it traffic. */
  readonly healthy: boolean;
  /** Calls waiting on it now. */
  readonly inFlight: number;
  /** Selector-specific details (breaker state, head, latency, counters...). */
  readonly details: Readonly<Record<string, unknown>>;
}

/**
 * Chooses which upstreams a call may go to, in order, and learns from how they did. The route stage calls
 * {@link UpstreamSelector.select}; the dispatch stage calls {@link UpstreamSelector.admit} before each
 * attempt and reports its outcome. The gateway calls {@link UpstreamSelector.start} once its networks
 * exist and {@link UpstreamSelector.stop} on shutdown.
 */
export interface UpstreamSelector {
  /** The state of every upstream it knows, for operators. Cheap, and JSON-serialisable. */
  status?(): UpstreamStatus[];
  /** The upstreams to try for this call, best first. Empty when none may serve it. */
  select(ctx: RequestContext): readonly Upstream[];
  /**
   * Called right before an attempt on `upstream` (`ctx.attempts` attempts were made before it): false
   * skips the upstream (it went unhealthy since the call was routed). A selector counts attempts here.
   */
  admit?(upstream: Upstream, ctx: RequestContext): boolean;
  /**
   * An attempt {@link UpstreamSelector.admit} let through is not sent after all (the upstream's own
   * budget refused it): a selector gives back what it claimed for it (a half-open trial) and uncounts it.
   */
  release?(upstream: Upstream, ctx: RequestContext): void;
  /** An upstream answered. */
  onSuccess?(upstream: Upstream, latencyMs: number): void;
  /** An upstream failed to answer. */
  onFailure?(upstream: Upstream, failure: UpstreamFailure): void;
  /**
   * Seconds a client should wait before retrying a call `network` could not serve (`Retry-After`).
   * Called once for every such call, so a selector may count them.
   */
  retryAfterSeconds?(network: Network): number;
  /**
   * The lowest head a client may be shown for `network` in `scope` (`''`: the network's head): the highest
   * any upstream of the deployment has shown. Undefined when none is known, or when the selector keeps none.
   */
  headFloor?(network: Network, scope: string): number | undefined;
  /** The network head `upstream` last reported (a probe, or an answer in the network's scope); undefined when unknown. */
  headOf?(upstream: Upstream): number | undefined;
  /** An answer of `upstream` showed head `head` in `scope`: the upstream is there, and the floor rises with it. */
  observeHead?(upstream: Upstream, scope: string, head: number): void;
  /**
   * When `upstream` is skipped for `method` (it answered "method not found" for it lately): the node's
   * words; undefined when it may take the method.
   */
  methodBan?(upstream: Upstream, method: string): string | undefined;
  /** `upstream` answered "method not found" for `method`, in `message`'s words: it may be skipped for it a while. */
  onMethodNotFound?(upstream: Upstream, method: string, message: string): void;
  /** The upstream's measured latency (a moving average of calls and probes), ms; undefined when not measured. */
  latencyMs?(upstream: Upstream): number | undefined;
  /**
   * Why the selector would refuse every call of `network` now (say, every breaker open), or undefined
   * when it routes calls: readiness reports a network it refuses as not ready.
   */
  refusal?(network: Network): string | undefined;
  /** Starts background work (active health probes) for the gateway's networks. */
  start?(networks: readonly Network[]): void;
  /** Stops background work. */
  stop?(): Promise<void>;
}
