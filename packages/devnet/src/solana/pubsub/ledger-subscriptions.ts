/**
 * `signatureSubscribe`, `logsSubscribe` and `blockSubscribe`: transactions and blocks, once their
 * slot reaches the subscription's commitment.
 *
 * @module
 */
import { TRANSACTION_ENCODINGS } from '../ledger/encode-transaction.js';
import { encodeBlock } from '../methods/blocks.js';
import type { TransactionRecord } from '../ledger/ledger.js';
import { commitmentOf, readBool, verifyPubkey, verifySignature } from '../methods/common.js';
import { RpcError } from '../rpc-error.js';
import { positional, readConfig, readString, readU64, readVariant, serdeError, unexpected } from '../serde-params.js';
import { CommitmentGate, type Subscription, type SubscriptionContext, type SubscriptionKind } from './subscription.js';

/** `signatureSubscribe`: fires once when the transaction reaches the commitment, then ends. */
export const signatureSubscribe: SubscriptionKind = {
  notification: 'signatureNotification',
  unsubscribe: 'signatureUnsubscribe',
  create(params: unknown, { node, notify, done }: SubscriptionContext): Subscription {
    const [signature, raw] = positional(params, 1, 2);
    const sig = verifySignature(readString(signature));
    const config = readConfig(raw, 'RpcSignatureSubscribeConfig');
    const received = readBool(config?.enableReceivedNotification) ?? false;
    let fired = false;
    const gate = new CommitmentGate<TransactionRecord>(node, commitmentOf(config), (record, slot) => {
      if (fired) return;
      fired = true;
      notify({ context: { slot }, value: { err: record.err } });
      done();
    });
    const landed = (record: TransactionRecord): void => {
      if (record.signature !== sig) return;
      if (received) notify({ context: { slot: record.slot }, value: 'receivedSignature' });
      gate.push(record.slot, record);
    };
    return {
      onTransaction: landed,
      onSlot() { gate.flush(); },
      // Already landed before the subscription: the client is told as soon as the commitment is reached.
      onSubscribed() {
        const record = node.ledger.transaction(sig);
        if (record !== undefined) gate.push(record.slot, record);
      },
    };
  },
};

/** `logsSubscribe`. */
export const logsSubscribe: SubscriptionKind = {
  notification: 'logsNotification',
  unsubscribe: 'logsUnsubscribe',
  create(params: unknown, { node, notify }: SubscriptionContext): Subscription {
    const [filter, raw] = positional(params, 1, 2);
    let mentions: string | undefined;
    if (filter === 'all' || filter === 'allWithVotes') mentions = undefined;
    else if (filter !== null && typeof filter === 'object' && !Array.isArray(filter) && 'mentions' in filter) {
      const list = (filter as { mentions: unknown }).mentions;
      if (!Array.isArray(list)) throw serdeError(`invalid type: ${unexpected(list)}, expected a sequence`);
      if (list.length !== 1) throw RpcError.invalidParams('Invalid Request: Only 1 address supported');
      mentions = verifyPubkey(readString(list[0]));
    } else {
      throw serdeError('unknown variant, expected one of `all`, `allWithVotes`, `mentions`');
    }
    const config = readConfig(raw, 'RpcTransactionLogsConfig');
    const gate = new CommitmentGate<TransactionRecord>(node, commitmentOf(config), (record, slot) => {
      notify({ context: { slot }, value: { signature: record.signature, err: record.err, logs: record.logs } });
    });
    return {
      onTransaction(record) { if (mentions === undefined || record.tx.accountKeys.includes(mentions)) gate.push(record.slot, record); },
      onSlot() { gate.flush(); },
    };
  },
};

/** `blockSubscribe` (agave serves it behind `--rpc-pubsub-enable-block-subscription`; the devnet always does). */
export const blockSubscribe: SubscriptionKind = {
  notification: 'blockNotification',
  unsubscribe: 'blockUnsubscribe',
  create(params: unknown, { node, notify }: SubscriptionContext): Subscription {
    const [filter, raw] = positional(params, 1, 2);
    let mentions: string | undefined;
    if (filter !== 'all') {
      const value = readConfig(filter, 'RpcBlockSubscribeFilter');
      if (value === undefined || typeof value.mentionsAccountOrProgram !== 'string') throw serdeError('unknown variant, expected `all` or `mentionsAccountOrProgram`');
      mentions = verifyPubkey(value.mentionsAccountOrProgram);
    }
    const config = readConfig(raw, 'RpcBlockSubscribeConfig');
    const commitment = commitmentOf(config);
    if (commitment === 'processed') throw RpcError.invalidParams('Method does not support commitment below `confirmed`');
    const encoding = readVariant(config?.encoding, TRANSACTION_ENCODINGS) ?? 'json';
    const details = readVariant(config?.transactionDetails, ['full', 'signatures', 'none', 'accounts'] as const) ?? 'full';
    const rewards = readBool(config?.showRewards) ?? true;
    const maxVersion = readU64(config?.maxSupportedTransactionVersion, 'u8');
    const gate = new CommitmentGate<null>(node, commitment, (_, slot) => {
      const records = node.ledger.transactions(slot);
      if (mentions !== undefined && !records.some((r) => r.tx.accountKeys.includes(mentions!))) return;
      let block: unknown;
      let err: unknown = null;
      try {
        block = encodeBlock(node, slot, { encoding, details, rewards, maxVersion });
      } catch (error) {
        // agave reports a block it cannot encode for this client (a v0 transaction without maxSupportedTransactionVersion) as an error value.
        block = null;
        err = error instanceof RpcError && error.code === -32015 ? { UnsupportedTransactionVersion: 0 } : 'BlockStoreError';
      }
      notify({ context: { slot }, value: { slot, err, block } });
    });
    // A block is complete when its slot is left behind: the head slot's parent is the newest full block.
    return { onSlot(slot) { gate.push(slot - 1n, null); } };
  },
};
