/**
 * The node's ledger: one block per slot (every slot produces one, as on a single-validator cluster),
 * the transactions each block holds, and the indexes agave's RPC reads (by signature, by address).
 *
 * @module
 */
import { createHash } from 'node:crypto';
import bs58 from 'bs58';
import type { UiTokenAmount } from '../parsers/token.js';
import type { WireTransaction } from './wire-transaction.js';

/** An inner instruction as agave records it. */
export interface InnerInstructionRecord {
  /** Index of the program in the account keys. */
  readonly programIdIndex: number;
  /** Indexes of its accounts. */
  readonly accounts: readonly number[];
  /** Its data, base-58. */
  readonly data: string;
  /** Its invocation depth. */
  readonly stackHeight: number;
}

/** A token account's balance in a transaction's meta (agave's `UiTransactionTokenBalance`). */
export interface TokenBalance {
  /** Index of the account in the account keys. */
  readonly accountIndex: number;
  /** Its mint, base-58. */
  readonly mint: string;
  /** Its amount, as agave shows token amounts. */
  readonly uiTokenAmount: UiTokenAmount;
  /** Its owner, base-58. */
  readonly owner: string;
  /** The token program, base-58. */
  readonly programId: string;
}

/** A transaction as a block holds it, with its status meta. */
export interface TransactionRecord {
  /** Its first signature, base-58. */
  readonly signature: string;
  /** The slot of the block holding it. */
  readonly slot: bigint;
  /** The decoded transaction. */
  readonly tx: WireTransaction;
  /** agave's JSON of its error, or null on success. */
  readonly err: unknown;
  /** Fee paid, in lamports. */
  readonly fee: bigint;
  /** Balances of the static account keys before. */
  readonly preBalances: readonly bigint[];
  /** Balances of the static account keys after. */
  readonly postBalances: readonly bigint[];
  /** Token balances of the static account keys before. */
  readonly preTokenBalances: readonly TokenBalance[];
  /** Token balances of the static account keys after. */
  readonly postTokenBalances: readonly TokenBalance[];
  /** Program log lines. */
  readonly logs: readonly string[];
  /** Inner instructions, by the index of the outer instruction. */
  readonly innerInstructions: ReadonlyArray<{ readonly index: number; readonly instructions: readonly InnerInstructionRecord[] }>;
  /** Compute units consumed. */
  readonly computeUnitsConsumed: bigint;
  /** Program return data, if any. */
  readonly returnData: { readonly programId: string; readonly data: Uint8Array } | undefined;
  /** Compute-unit price asked (micro-lamports), for `getRecentPrioritizationFees`. */
  readonly computeUnitPrice: bigint;
}

/** How far back blockhashes stay valid: agave's `MAX_PROCESSING_AGE` (150 blocks). */
export const MAX_PROCESSING_AGE = 150;

/** The ledger of a single-validator chain. */
export class Ledger {
  /** The genesis hash, base-58. */
  readonly genesisHash: string;
  /** The first slot (the genesis block's). */
  readonly firstSlot: bigint;
  readonly #genesis: Buffer;
  readonly #blockTimes: number[] = [];
  readonly #bySlot = new Map<bigint, TransactionRecord[]>();
  readonly #bySignature = new Map<string, TransactionRecord>();
  readonly #byAddress = new Map<string, TransactionRecord[]>();
  readonly #recentBlockhashes = new Map<string, bigint>();
  #transactionCount = 0n;

  /**
   * @param seed - Makes the genesis hash (and so every blockhash) of this chain.
   * @param firstSlot - The genesis block's slot.
   * @param genesisTime - The genesis block's unix time.
   */
  constructor(seed: string, firstSlot: bigint, genesisTime: number) {
    this.#genesis = createHash('sha256').update(`tollgate-litesvm-genesis:${seed}`).digest();
    this.genesisHash = bs58.encode(this.#genesis);
    this.firstSlot = firstSlot;
    this.produced(firstSlot, genesisTime);
  }

  /** The blockhash of the block at `slot`. */
  blockhash(slot: bigint): string {
    const at = Buffer.alloc(8);
    at.writeBigUInt64LE(slot);
    return bs58.encode(createHash('sha256').update(this.#genesis).update(at).digest());
  }

  /** Records that the block at `slot` was produced at `unixSeconds`. */
  produced(slot: bigint, unixSeconds: number): void {
    const index = Number(slot - this.firstSlot);
    while (this.#blockTimes.length <= index) this.#blockTimes.push(unixSeconds);
    const hash = this.blockhash(slot);
    this.#recentBlockhashes.set(hash, slot);
    // Keep twice the valid window, so that an expired hash is still known to be expired.
    for (const [old, at] of this.#recentBlockhashes) {
      if (slot - at <= BigInt(2 * MAX_PROCESSING_AGE)) break;
      this.#recentBlockhashes.delete(old);
    }
  }

  /** The unix time of the block at `slot`, or undefined when it is not produced. */
  blockTime(slot: bigint): number | undefined {
    return slot < this.firstSlot ? undefined : this.#blockTimes[Number(slot - this.firstSlot)];
  }

  /** The block height of the block at `slot` (one block per slot since genesis). */
  blockHeight(slot: bigint): bigint {
    return slot - this.firstSlot;
  }

  /** The slot of a recent blockhash, or undefined when it is unknown or long gone. */
  blockhashSlot(hash: string): bigint | undefined {
    return this.#recentBlockhashes.get(hash);
  }

  /** Adds a transaction to the block at its slot and to the indexes. */
  add(record: TransactionRecord): void {
    const block = this.#bySlot.get(record.slot);
    if (block === undefined) this.#bySlot.set(record.slot, [record]);
    else block.push(record);
    this.#bySignature.set(record.signature, record);
    const keys = new Set([...record.tx.accountKeys, ...record.tx.addressTableLookups.map((l) => l.accountKey)]);
    for (const key of keys) {
      const list = this.#byAddress.get(key);
      if (list === undefined) this.#byAddress.set(key, [record]);
      else list.push(record);
    }
    this.#transactionCount += 1n;
  }

  /** The transactions of the block at `slot`, in order. */
  transactions(slot: bigint): readonly TransactionRecord[] {
    return this.#bySlot.get(slot) ?? [];
  }

  /** A transaction by its signature. */
  transaction(signature: string): TransactionRecord | undefined {
    return this.#bySignature.get(signature);
  }

  /** Transactions that name `address`, oldest first. */
  history(address: string): readonly TransactionRecord[] {
    return this.#byAddress.get(address) ?? [];
  }

  /** Transactions processed since genesis. */
  get transactionCount(): bigint {
    return this.#transactionCount;
  }

  /** Transactions in the blocks up to `slot` (those of later blocks, up to `head`, not counted). */
  transactionCountAt(slot: bigint, head: bigint): bigint {
    let count = this.#transactionCount;
    for (let s = head; s > slot; s--) count -= BigInt(this.transactions(s).length);
    return count;
  }

  /** Every slot holding transactions, in increasing order (for prioritization fees). */
  slotsWithTransactions(): bigint[] {
    return [...this.#bySlot.keys()];
  }
}
