import type { MaybePromise } from '../util/maybe-promise.js';
import type { DebitReceipt, DebitRefused } from './credit-ledger.js';
import type { ApiKeyRecord, Plan } from './keys.js';

/**
 * Something delivered to a client outside a call, and charged on its own: an event of a subscription,
 * for instance. The call that opened the subscription went through the pipeline (and was charged
 * there); each event it brings is charged here, against the same daily balance.
 */
export interface MeteredEvent {
  /** The key the event is delivered to (as authenticated by the call that opened the stream). */
  readonly key: ApiKeyRecord;
  /** The key's plan. */
  readonly plan: Plan;
  /** The network's name. */
  readonly network: string;
  /** What usage records it under (for an `eth_subscribe` stream of new heads: `eth_subscription:newHeads`). */
  readonly method: string;
  /** Credits it costs. */
  readonly credits: number;
  /** Bytes delivered, for usage. */
  readonly bytes?: number;
}

/**
 * Charges events: a debit of the key's daily balance (no throughput bucket: the client does not choose
 * when events come), and a usage record once the debit is taken. A refused debit means the events must
 * not be delivered; the caller then closes the stream with the quota error.
 *
 * Given a list, the events (of one key, plan and network: the first one's are used) are charged together
 * in one debit of their summed credits, all or none: a burst of events costs one ledger round trip. Usage
 * records each event under its own method.
 */
export type EventMeter = (events: MeteredEvent | readonly MeteredEvent[]) => MaybePromise<EventCharge>;

/**
 * Gives back the charge of events that were not delivered after all (the connection closed before they
 * were written): the debit is refunded (the ledger applies a refund once per debit) and usage no longer
 * counts them. Pass the same events the charge was for. Never throws: a failing ledger is logged.
 */
export type EventRefund = (charge: EventTaken, events: MeteredEvent | readonly MeteredEvent[]) => void;

/** The outcome of charging events: taken (deliver them), or refused (do not; the balance is used up). */
export type EventCharge = EventTaken | DebitRefused;

/** An event's debit was taken: deliver it. */
export interface EventTaken {
  /** Always true. */
  readonly ok: true;
  /** The debit, to refund it if the events cannot be delivered; absent when they cost nothing. */
  readonly receipt?: DebitReceipt;
}
