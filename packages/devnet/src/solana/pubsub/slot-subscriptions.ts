/**
 * `slotSubscribe`, `slotsUpdatesSubscribe`, `rootSubscribe` and `voteSubscribe`: the chain's
 * progress, one notification per slot.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import bs58 from 'bs58';
import { expectNoParams } from '../serde-params.js';
import { voteAccountOf } from '../methods/validator.js';
import type { Subscription, SubscriptionContext, SubscriptionKind } from './subscription.js';

/** `slotSubscribe`. */
export const slotSubscribe: SubscriptionKind = {
  notification: 'slotNotification',
  unsubscribe: 'slotUnsubscribe',
  create(params: unknown, { node, notify }: SubscriptionContext): Subscription {
    expectNoParams(params);
    return { onSlot(slot) { notify({ parent: slot - 1n, root: node.slot('finalized'), slot }); } };
  },
};

/** `rootSubscribe`: each new finalized (rooted) slot. */
export const rootSubscribe: SubscriptionKind = {
  notification: 'rootNotification',
  unsubscribe: 'rootUnsubscribe',
  create(params: unknown, { node, notify }: SubscriptionContext): Subscription {
    expectNoParams(params);
    let last = node.slot('finalized');
    return {
      onSlot() {
        const root = node.slot('finalized');
        for (let s = last + 1n; s <= root; s++) notify(s);
        if (root > last) last = root;
      },
    };
  },
};

/** `slotsUpdatesSubscribe`: a slot's life from first shred to root, in agave's update types. */
export const slotsUpdatesSubscribe: SubscriptionKind = {
  notification: 'slotsUpdatesNotification',
  unsubscribe: 'slotsUpdatesUnsubscribe',
  create(params: unknown, { node, notify }: SubscriptionContext): Subscription {
    expectNoParams(params);
    let frozenUpTo = node.slot('processed');
    let confirmed = node.slot('confirmed');
    let root = node.slot('finalized');
    return {
      onSlot(slot) {
        const timestamp = node.now();
        // The previous slot's bank is done: it completes and freezes as the new one is created.
        for (let done = frozenUpTo; done < slot; done++) {
          if (done < node.ledger.firstSlot) continue;
          const records = node.ledger.transactions(done);
          const failed = records.filter((r) => r.err !== null).length;
          notify({ type: 'completed', slot: done, timestamp });
          notify({
            type: 'frozen', slot: done, timestamp,
            stats: { numTransactionEntries: records.length, numSuccessfulTransactions: records.length - failed, numFailedTransactions: failed, maxTransactionsPerEntry: records.length === 0 ? 0 : 1 },
          });
        }
        frozenUpTo = slot;
        notify({ type: 'firstShredReceived', slot, timestamp });
        notify({ type: 'createdBank', slot, timestamp, parent: slot - 1n });
        for (; confirmed < node.slot('confirmed'); ) notify({ type: 'optimisticConfirmation', slot: ++confirmed, timestamp });
        for (; root < node.slot('finalized'); ) notify({ type: 'root', slot: ++root, timestamp });
      },
    };
  },
};

/** `voteSubscribe` (agave: behind `--rpc-pubsub-enable-vote-subscription`): the validator's vote on each slot. */
export const voteSubscribe: SubscriptionKind = {
  notification: 'voteNotification',
  unsubscribe: 'voteUnsubscribe',
  create(params: unknown, { node, notify }: SubscriptionContext): Subscription {
    expectNoParams(params);
    const votePubkey = voteAccountOf(node);
    return {
      onSlot(slot) {
        const voted = slot - 1n;
        if (voted < node.ledger.firstSlot) return;
        const hash = node.ledger.blockhash(voted);
        // The vote transaction is not in the ledger (votes are not client transactions here): its id is derived from what it votes on.
        const signature = bs58.encode(Buffer.concat([createHash('sha512').update(`vote:${votePubkey}:${hash}`).digest()]));
        notify({ votePubkey, slots: [voted], hash, timestamp: node.ledger.blockTime(voted) ?? null, signature });
      },
    };
  },
};
