/**
 * What a WebSocket subscription of the node is: a kind (its subscribe and unsubscribe methods, its
 * notification's name) that makes a subscription from params, fed the node's events.
 *
 * @module
 */
import type { TransactionRecord } from '../ledger/ledger.js';
import type { Commitment, LiteSvmNode } from '../litesvm-node.js';

/** A live subscription: it reacts to the node's events by notifying its client. */
export interface Subscription {
  /** A new head slot. */
  onSlot?(slot: bigint): void;
  /** A transaction landed in the head block. */
  onTransaction?(record: TransactionRecord): void;
  /** Accounts written in the head block. */
  onAccounts?(addresses: readonly string[], slot: bigint): void;
  /** Runs once the subscribe answer is written (a subscription whose event already happened fires here). */
  onSubscribed?(): void;
}

/** What a kind gets to make a subscription. */
export interface SubscriptionContext {
  /** The node. */
  readonly node: LiteSvmNode;
  /** Sends one notification with `result`. */
  readonly notify: (result: unknown) => void;
  /** Ends the subscription from the node's side (a `signatureSubscribe` after it fired). */
  readonly done: () => void;
}

/** A subscription kind, e.g. `accountSubscribe`. */
export interface SubscriptionKind {
  /** The notification method, e.g. `accountNotification`. */
  readonly notification: string;
  /** The unsubscribe method, e.g. `accountUnsubscribe`. */
  readonly unsubscribe: string;
  /**
   * Makes a subscription from the subscribe call's params.
   *
   * @throws RpcError for bad params, as agave words them.
   */
  create(params: unknown, ctx: SubscriptionContext): Subscription;
}

/**
 * Holds back items stamped with a slot until the node's slot at `commitment` reaches it, then hands
 * them over in order. `processed` items pass at once.
 */
export class CommitmentGate<T> {
  readonly #queue: Array<{ slot: bigint; item: T }> = [];

  /**
   * @param node - The node whose slots open the gate.
   * @param commitment - The level an item's slot must reach.
   * @param release - Called with each item whose slot reached the level.
   */
  constructor(private readonly node: LiteSvmNode, private readonly commitment: Commitment, private readonly release: (item: T, slot: bigint) => void) {}

  /** Queues `item` of `slot` (and releases what is due). */
  push(slot: bigint, item: T): void {
    this.#queue.push({ slot, item });
    this.flush();
  }

  /** Releases what is due. */
  flush(): void {
    const reached = this.node.slot(this.commitment);
    while (this.#queue.length > 0 && this.#queue[0]!.slot <= reached) {
      const { slot, item } = this.#queue.shift()!;
      this.release(item, slot);
    }
  }
}
