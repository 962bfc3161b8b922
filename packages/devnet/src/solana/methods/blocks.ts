/**
 * Blocks and slots: `getBlock`, `getBlockCommitment`, `getBlockHeight`, `getBlockProduction`,
 * `getBlocks`, `getBlocksWithLimit`, `getBlockTime`, `getFirstAvailableBlock`, `minimumLedgerSlot`,
 * `getSlot`, `getSlotLeader`, `getSlotLeaders`, `getMaxRetransmitSlot`, `getMaxShredInsertSlot`,
 * `getHighestSnapshotSlot`.
 *
 * @module
 */
import { encodeMeta, encodeWithMeta, TRANSACTION_ENCODINGS, type TransactionEncoding } from '../ledger/encode-transaction.js';
import { epochOf, firstSlotOfEpoch } from '../ledger/epochs.js';
import { isSigner, isWritable } from '../ledger/wire-transaction.js';
import type { LiteSvmNode } from '../litesvm-node.js';
import { RpcError } from '../rpc-error.js';
import { expectNoParams, positional, readConfig, readString, readU64, readVariant, serdeError, unexpected } from '../serde-params.js';
import { atLeastConfirmed, contextSlot, readBool, verifyPubkey, withContext, type MethodContext } from './common.js';
import { VALIDATOR_STAKE } from './validator.js';

/** agave's `MAX_GET_CONFIRMED_BLOCKS_RANGE`. */
export const MAX_BLOCKS_RANGE = 500_000;
/** agave's `MAX_GET_SLOT_LEADERS`. */
export const MAX_SLOT_LEADERS = 5000;
const DEFAULT_HASH = '11111111111111111111111111111111';

function requiredSlot(value: unknown): bigint {
  const slot = readU64(value);
  if (slot === undefined) throw serdeError(`invalid type: ${unexpected(value)}, expected u64`);
  return BigInt(slot);
}

/** agave's checks on a block slot: cleaned up below the first block, not available above the commitment. */
function checkBlockSlot(node: LiteSvmNode, slot: bigint, highest: bigint): void {
  if (slot < node.ledger.firstSlot) {
    throw new RpcError(-32001, `Block ${slot} cleaned up, does not exist on node. First available block: ${node.ledger.firstSlot}`);
  }
  if (slot > highest) throw new RpcError(-32004, `Block not available for slot ${slot}`);
}

function getBlock(params: unknown, { node }: MethodContext): unknown {
  const [rawSlot, rawConfig] = positional(params, 1, 2);
  const slot = requiredSlot(rawSlot);
  const config = typeof rawConfig === 'string' ? { encoding: rawConfig } : readConfig(rawConfig, 'RpcBlockConfig');
  const encoding = readVariant(config?.encoding, TRANSACTION_ENCODINGS) ?? 'json';
  const details = readVariant(config?.transactionDetails, ['full', 'signatures', 'none', 'accounts'] as const) ?? 'full';
  const rewards = readBool(config?.rewards) ?? true;
  const maxVersion = readU64(config?.maxSupportedTransactionVersion, 'u8');
  checkBlockSlot(node, slot, node.slot(atLeastConfirmed(config)));
  return encodeBlock(node, slot, { encoding, details, rewards, maxVersion });
}

/** How a block is shown: `getBlock`'s and `blockSubscribe`'s options. */
export interface BlockView {
  /** Transaction encoding. */
  readonly encoding: TransactionEncoding;
  /** `full`, `signatures`, `accounts` or `none`. */
  readonly details: 'full' | 'signatures' | 'none' | 'accounts';
  /** Whether to list rewards. */
  readonly rewards: boolean;
  /** `maxSupportedTransactionVersion`. */
  readonly maxVersion: number | undefined;
}

/**
 * agave's `UiConfirmedBlock` of the block at `slot`.
 *
 * @throws RpcError `-32015` for a v0 transaction without `maxVersion`.
 */
export function encodeBlock(node: LiteSvmNode, slot: bigint, { encoding, details, rewards, maxVersion }: BlockView): Record<string, unknown> {
  const records = node.ledger.transactions(slot);
  const genesis = slot === node.ledger.firstSlot;
  let transactions: unknown;
  if (details === 'full') transactions = records.map((r) => encodeWithMeta(r, encoding, maxVersion));
  if (details === 'accounts') {
    transactions = records.map((r) => {
      const full = encodeMeta(r, false);
      return {
        transaction: {
          signatures: r.tx.signatures,
          accountKeys: r.tx.accountKeys.map((pubkey, i) => ({ pubkey, writable: isWritable(r.tx, i), signer: isSigner(r.tx, i), source: 'transaction' })),
        },
        meta: { err: full.err, status: full.status, fee: full.fee, preBalances: full.preBalances, postBalances: full.postBalances, preTokenBalances: full.preTokenBalances, postTokenBalances: full.postTokenBalances },
        version: maxVersion === undefined ? undefined : r.tx.version,
      };
    });
  }
  return {
    previousBlockhash: genesis ? DEFAULT_HASH : node.ledger.blockhash(slot - 1n),
    blockhash: node.ledger.blockhash(slot),
    parentSlot: genesis ? (slot === 0n ? 0n : slot - 1n) : slot - 1n,
    transactions,
    signatures: details === 'signatures' ? records.map((r) => r.signature) : undefined,
    rewards: rewards ? [] : undefined,
    blockTime: node.ledger.blockTime(slot) ?? null,
    blockHeight: node.ledger.blockHeight(slot),
  };
}

function getBlockCommitment(params: unknown, { node }: MethodContext): unknown {
  const [rawSlot] = positional(params, 1, 1);
  const slot = requiredSlot(rawSlot);
  const head = node.slot('processed');
  // The one validator's stake votes on every block up to the head: its lockout depth is how far below the head the block is.
  let commitment: bigint[] | null = null;
  if (slot <= head && slot > node.slot('finalized') && slot >= node.ledger.firstSlot) {
    commitment = new Array<bigint>(32).fill(0n);
    commitment[Math.min(31, Number(head - slot))] = VALIDATOR_STAKE;
  }
  return { commitment, totalStake: VALIDATOR_STAKE };
}

function getBlockHeight(params: unknown, { node }: MethodContext): unknown {
  const [rawConfig] = positional(params, 0, 1);
  return node.ledger.blockHeight(contextSlot(node, readConfig(rawConfig, 'RpcContextConfig')));
}

function getBlockProduction(params: unknown, { node }: MethodContext): unknown {
  const [rawConfig] = positional(params, 0, 1);
  const config = readConfig(rawConfig, 'RpcBlockProductionConfig');
  const identity = config?.identity === undefined || config.identity === null ? undefined : verifyPubkey(readString(config.identity));
  const range = readConfig(config?.range, 'RpcBlockProductionConfigRange');
  const slot = contextSlot(node, config);
  const schedule = node.svm.getEpochSchedule();
  const firstSlot = range?.firstSlot === undefined ? firstSlotOfEpoch(schedule, epochOf(schedule, slot).epoch) : requiredSlot(range.firstSlot);
  const lastSlot = range?.lastSlot === undefined || range.lastSlot === null ? slot : requiredSlot(range.lastSlot);
  if (lastSlot < firstSlot) throw RpcError.invalidParams(`lastSlot, ${lastSlot}, cannot be less than firstSlot, ${firstSlot}`);
  if (lastSlot > slot) throw RpcError.invalidParams(`lastSlot, ${lastSlot}, cannot be greater than current slot, ${slot}`);
  const from = firstSlot < node.ledger.firstSlot ? node.ledger.firstSlot : firstSlot;
  const produced = lastSlot >= from ? lastSlot - from + 1n : 0n;
  const byIdentity: Record<string, [bigint, bigint]> = {};
  if (identity === undefined || identity === node.identity) byIdentity[node.identity] = [produced, produced];
  return withContext(node, slot, { byIdentity, range: { firstSlot, lastSlot } });
}

function blockRange(node: LiteSvmNode, start: bigint, end: bigint, highest: bigint): bigint[] {
  const out: bigint[] = [];
  const last = end < highest ? end : highest;
  for (let s = start < node.ledger.firstSlot ? node.ledger.firstSlot : start; s <= last; s++) out.push(s);
  return out;
}

function getBlocks(params: unknown, { node }: MethodContext): unknown {
  const [rawStart, rawEnd, rawConfig] = positional(params, 1, 3);
  const start = requiredSlot(rawStart);
  // `getBlocks(start, config)`: agave takes a config in the end slot's place.
  const endIsConfig = rawEnd !== null && typeof rawEnd === 'object';
  const end = rawEnd === undefined || rawEnd === null || endIsConfig ? undefined : requiredSlot(rawEnd);
  const config = readConfig(endIsConfig ? rawEnd : rawConfig, 'RpcContextConfig');
  const highest = node.slot(atLeastConfirmed(config));
  const last = end ?? highest;
  if (last >= start && last - start > BigInt(MAX_BLOCKS_RANGE)) throw RpcError.invalidParams(`Slot range too large; max ${MAX_BLOCKS_RANGE}`);
  return last < start ? [] : blockRange(node, start, last, highest);
}

function getBlocksWithLimit(params: unknown, { node }: MethodContext): unknown {
  const [rawStart, rawLimit, rawConfig] = positional(params, 2, 3);
  const start = requiredSlot(rawStart);
  const limit = readU64(rawLimit, 'usize');
  if (limit === undefined) throw serdeError(`invalid type: ${unexpected(rawLimit)}, expected usize`);
  if (limit > MAX_BLOCKS_RANGE) throw RpcError.invalidParams(`Limit too large; max ${MAX_BLOCKS_RANGE}`);
  const highest = node.slot(atLeastConfirmed(readConfig(rawConfig, 'RpcContextConfig')));
  return limit === 0 ? [] : blockRange(node, start, start + BigInt(limit) - 1n, highest);
}

function getBlockTime(params: unknown, { node }: MethodContext): unknown {
  const [rawSlot] = positional(params, 1, 1);
  const slot = requiredSlot(rawSlot);
  checkBlockSlot(node, slot, node.slot('confirmed'));
  return node.ledger.blockTime(slot) ?? null;
}

function firstAvailable(params: unknown, { node }: MethodContext): unknown {
  expectNoParams(params);
  return node.ledger.firstSlot;
}

function getSlot(params: unknown, { node }: MethodContext): unknown {
  const [rawConfig] = positional(params, 0, 1);
  return contextSlot(node, readConfig(rawConfig, 'RpcContextConfig'));
}

function getSlotLeader(params: unknown, { node }: MethodContext): unknown {
  const [rawConfig] = positional(params, 0, 1);
  contextSlot(node, readConfig(rawConfig, 'RpcContextConfig'));
  return node.identity;
}

function getSlotLeaders(params: unknown, { node }: MethodContext): unknown {
  const [rawStart, rawLimit] = positional(params, 2, 2);
  requiredSlot(rawStart);
  const limit = readU64(rawLimit);
  if (limit === undefined) throw serdeError(`invalid type: ${unexpected(rawLimit)}, expected u64`);
  if (limit > MAX_SLOT_LEADERS) throw RpcError.invalidParams(`Invalid limit; max ${MAX_SLOT_LEADERS}`);
  return new Array<string>(limit).fill(node.identity);
}

function headSlot(params: unknown, { node }: MethodContext): unknown {
  expectNoParams(params);
  return node.slot('processed');
}

/** How often the node "takes" a full snapshot, in slots (a test-validator's default interval is 100). */
export const SNAPSHOT_INTERVAL = 100n;

function getHighestSnapshotSlot(params: unknown, { node }: MethodContext): unknown {
  expectNoParams(params);
  const rooted = node.slot('finalized');
  const full = (rooted / SNAPSHOT_INTERVAL) * SNAPSHOT_INTERVAL;
  if (full <= node.ledger.firstSlot) throw new RpcError(-32008, 'No snapshot');
  return { full, incremental: null };
}

/** The block and slot methods by name. */
export const BLOCK_METHODS = {
  getBlock, getBlockCommitment, getBlockHeight, getBlockProduction, getBlocks, getBlocksWithLimit, getBlockTime,
  getFirstAvailableBlock: firstAvailable, minimumLedgerSlot: firstAvailable, getSlot, getSlotLeader, getSlotLeaders,
  getMaxRetransmitSlot: headSlot, getMaxShredInsertSlot: headSlot, getHighestSnapshotSlot,
};
