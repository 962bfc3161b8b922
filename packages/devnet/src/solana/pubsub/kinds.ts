/**
 * The nine subscriptions the node serves, by subscribe method.
 *
 * @module
 */
import { accountSubscribe, programSubscribe } from './account-subscriptions.js';
import { blockSubscribe, logsSubscribe, signatureSubscribe } from './ledger-subscriptions.js';
import { rootSubscribe, slotsUpdatesSubscribe, slotSubscribe, voteSubscribe } from './slot-subscriptions.js';
import type { SubscriptionKind } from './subscription.js';

/** Every subscription kind, by its subscribe method. */
export const SUBSCRIPTION_KINDS: Readonly<Record<string, SubscriptionKind>> = Object.freeze({
  accountSubscribe, blockSubscribe, logsSubscribe, programSubscribe, rootSubscribe, signatureSubscribe, slotSubscribe,
  slotsUpdatesSubscribe, voteSubscribe,
});
