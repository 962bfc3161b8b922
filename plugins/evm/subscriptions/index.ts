/**
 * The evm family's subscriptions (`eth_subscribe`): kinds, prices and continuity across nodes.
 *
 * @module
 */
import type { SubscriptionSupport } from '../../../core/family-api.js';
import { HeadContinuity } from './head-continuity.js';
import { LogContinuity } from './log-continuity.js';
import { PendingContinuity } from './pending-continuity.js';
import { evmStreamRequest } from './stream-request.js';

export { EVM_SUBSCRIPTION_METHODS, SUBSCRIPTION_KINDS, type SubscriptionKind } from './methods.js';
export { evmStreamRequest } from './stream-request.js';
export { HeadContinuity, headerOf } from './head-continuity.js';
export { LogContinuity } from './log-continuity.js';
export { PendingContinuity } from './pending-continuity.js';

/**
 * Credits per delivered event, by kind. The hosted service charges each event by its kind (its
 * pricing guide says so) but publishes no per-kind figures we could check, so these defaults are
 * Tollgate's own choice; operators set their own per method, kind and plan.
 */
export const EVM_EVENT_CREDITS: Readonly<Record<string, number>> = Object.freeze({ newHeads: 50, logs: 300, newPendingTransactions: 200 });

/** Limits of history reads when a stream moves between nodes. */
export interface EvmStreamLimits {
  /** Most blocks a `newHeads` gap is filled with (the newest of them). Default 256. */
  readonly maxHeadGap?: number;
  /** Widest block range one `eth_getLogs` fill reads (the newest blocks). Default 1,000. */
  readonly maxLogRange?: number;
}

/** The subscription support of the evm family. */
export function evmSubscriptions(limits: EvmStreamLimits = {}): SubscriptionSupport {
  return {
    methods: [{ subscribe: 'eth_subscribe', unsubscribe: 'eth_unsubscribe', notification: 'eth_subscription' }],
    ids: 'hex',
    unknownId: 'false',
    request: (params) => evmStreamRequest(params),
    eventCredits: EVM_EVENT_CREDITS,
    continuity(request) {
      if (request.kind === 'newHeads') return new HeadContinuity(limits.maxHeadGap ?? 256);
      if (request.kind === 'logs') return new LogContinuity(request.params[1] as Record<string, unknown>, limits.maxLogRange ?? 1_000);
      return new PendingContinuity();
    },
  };
}
