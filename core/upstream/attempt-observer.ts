import type { InjectionToken } from 'tsyringe';
import type { RequestContext } from '../contracts/request-context.js';
import type { Upstream } from '../contracts/upstream.js';
import type { UpstreamFailure } from '../contracts/upstream-failure.js';

/** Ends one upstream attempt: `undefined` when the upstream answered, the failure otherwise. */
export type AttemptEnd = (failure: UpstreamFailure | undefined) => void;

/**
 * Sees each attempt `dispatch` makes at an upstream, from before the request leaves to its outcome
 * (traces put a span around each). Observers must not throw and must not hold the call up.
 */
export interface AttemptObserver {
  /** Called as the attempt starts; the returned function is called once, when it ends. */
  attemptStarted(ctx: RequestContext, upstream: Upstream): AttemptEnd;
}

/** Multi: every {@link AttemptObserver}. */
export const AttemptObserverToken = Symbol.for('tollgate.AttemptObserver') as InjectionToken<AttemptObserver>;
