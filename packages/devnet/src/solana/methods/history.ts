/**
 * Transaction history: `getTransaction`, `getSignaturesForAddress`, `getSignatureStatuses`,
 * `getTransactionCount`.
 *
 * @module
 */
import { encodeWithMeta, TRANSACTION_ENCODINGS, type TransactionEncoding } from '../ledger/encode-transaction.js';
import type { TransactionRecord } from '../ledger/ledger.js';
import type { Commitment, LiteSvmNode } from '../litesvm-node.js';
import { RpcError } from '../rpc-error.js';
import { positional, readConfig, readString, readU64, readVariant } from '../serde-params.js';
import { atLeastConfirmed, contextSlot, readBool, readStringList, verifyPubkey, verifySignature, withContext, type MethodContext } from './common.js';

/** agave's `MAX_GET_SIGNATURE_STATUSES_QUERY_ITEMS`. */
export const MAX_SIGNATURE_STATUSES = 256;
/** agave's `MAX_GET_CONFIRMED_SIGNATURES_FOR_ADDRESS2_LIMIT`. */
export const MAX_SIGNATURES_FOR_ADDRESS = 1000;

/** The commitment a landed transaction has reached: finalized, confirmed or processed. */
export function confirmationStatus(node: LiteSvmNode, slot: bigint): Commitment {
  if (slot <= node.slot('finalized')) return 'finalized';
  return slot <= node.slot('confirmed') ? 'confirmed' : 'processed';
}

/** agave's `TransactionStatus` of a record. */
export function transactionStatus(node: LiteSvmNode, record: TransactionRecord): Record<string, unknown> {
  const level = confirmationStatus(node, record.slot);
  return {
    slot: record.slot,
    confirmations: level === 'finalized' ? null : Number(node.slot('processed') - record.slot),
    status: record.err === null ? { Ok: null } : { Err: record.err },
    err: record.err,
    confirmationStatus: level,
  };
}

/** An encoding given as a bare string (the legacy form) or in a config. */
function readEncodingConfig(value: unknown, struct: string): { config: Record<string, unknown> | undefined; encoding: TransactionEncoding | undefined } {
  if (typeof value === 'string') return { config: undefined, encoding: readVariant(value, TRANSACTION_ENCODINGS) };
  const config = readConfig(value, struct);
  return { config, encoding: readVariant(config?.encoding, TRANSACTION_ENCODINGS) };
}

function getTransaction(params: unknown, { node }: MethodContext): unknown {
  const [signature, rawConfig] = positional(params, 1, 2);
  const sig = verifySignature(readString(signature));
  const { config, encoding } = readEncodingConfig(rawConfig, 'RpcTransactionConfig');
  const maxVersion = readU64(config?.maxSupportedTransactionVersion, 'u8');
  if (maxVersion !== undefined && maxVersion > 0) throw new RpcError(-32602, `Invalid param: unsupported transaction version ${maxVersion}`);
  const commitment = atLeastConfirmed(config);
  const record = node.ledger.transaction(sig);
  if (record === undefined || record.slot > node.slot(commitment)) return null;
  return { slot: record.slot, ...encodeWithMeta(record, encoding ?? 'json', maxVersion), blockTime: node.ledger.blockTime(record.slot) ?? null };
}

function getSignaturesForAddress(params: unknown, { node }: MethodContext): unknown {
  const [address, rawConfig] = positional(params, 1, 2);
  const pubkey = verifyPubkey(readString(address));
  const config = readConfig(rawConfig, 'RpcSignaturesForAddressConfig');
  const limit = readU64(config?.limit, 'usize') ?? MAX_SIGNATURES_FOR_ADDRESS;
  if (limit === 0 || limit > MAX_SIGNATURES_FOR_ADDRESS) throw RpcError.invalidParams(`Invalid limit; max ${MAX_SIGNATURES_FOR_ADDRESS}`);
  const before = config?.before === undefined || config.before === null ? undefined : verifySignature(readString(config.before));
  const until = config?.until === undefined || config.until === null ? undefined : verifySignature(readString(config.until));
  const commitment = atLeastConfirmed(config);
  contextSlot(node, config);
  const highest = node.slot(commitment);
  const history = node.ledger.history(pubkey);
  const out: unknown[] = [];
  let started = before === undefined;
  for (let i = history.length - 1; i >= 0 && out.length < limit; i--) {
    const record = history[i]!;
    if (record.signature === until) break;
    if (!started) { started = record.signature === before; continue; }
    if (record.slot > highest) continue;
    out.push({
      signature: record.signature,
      slot: record.slot,
      err: record.err,
      memo: null,
      blockTime: node.ledger.blockTime(record.slot) ?? null,
      confirmationStatus: confirmationStatus(node, record.slot),
    });
  }
  return out;
}

function getSignatureStatuses(params: unknown, { node }: MethodContext): unknown {
  const [signatures, rawConfig] = positional(params, 1, 2);
  const list = readStringList(signatures);
  const config = readConfig(rawConfig, 'RpcSignatureStatusConfig');
  readBool(config?.searchTransactionHistory);
  if (list.length > MAX_SIGNATURE_STATUSES) throw RpcError.invalidParams(`Too many inputs provided; max ${MAX_SIGNATURE_STATUSES}`);
  const sigs = list.map(verifySignature);
  return withContext(node, node.slot('processed'), sigs.map((sig) => {
    const record = node.ledger.transaction(sig);
    return record === undefined ? null : transactionStatus(node, record);
  }));
}

function getTransactionCount(params: unknown, { node }: MethodContext): unknown {
  const [rawConfig] = positional(params, 0, 1);
  const slot = contextSlot(node, readConfig(rawConfig, 'RpcContextConfig'));
  return node.ledger.transactionCountAt(slot, node.slot('processed'));
}

/** The history methods by name. */
export const HISTORY_METHODS = { getTransaction, getSignaturesForAddress, getSignatureStatuses, getTransactionCount };
