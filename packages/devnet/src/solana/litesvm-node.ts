/**
 * A LiteSVM virtual machine run as a node: its slot advances on a timer, and it answers for accounts
 * at a commitment level the way an agave bank does.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import bs58 from 'bs58';
import { Account, Clock, FeatureSet, LiteSVM } from 'litesvm';
import { epochOf } from './ledger/epochs.js';
import { Ledger, type TransactionRecord } from './ledger/ledger.js';

/** The account fields a node reports. */
export interface NodeAccount {
  /** Balance, in lamports. */
  readonly lamports: bigint;
  /** The account's data. */
  readonly data: Uint8Array;
  /** Owner program, base-58. */
  readonly owner: string;
  /** Whether it holds a program. */
  readonly executable: boolean;
  /** Epoch in which it next owes rent (u64::MAX for rent-exempt accounts on modern clusters). */
  readonly rentEpoch: bigint;
}

/** An account to write into the VM; `rentEpoch` defaults to u64::MAX, `executable` to false. */
export interface AccountInput {
  /** Balance, in lamports. */
  readonly lamports: bigint | number;
  /** The account's data (default empty). */
  readonly data?: Uint8Array;
  /** Owner program, base-58 (default the system program). */
  readonly owner?: string;
  /** Whether it holds a program (LiteSVM checks executable accounts hold valid program data). */
  readonly executable?: boolean;
  /** Rent epoch (default u64::MAX, as modern agave reports for rent-exempt accounts). */
  readonly rentEpoch?: bigint | number;
}

/** A commitment level. */
export type Commitment = 'processed' | 'confirmed' | 'finalized';

/** u64::MAX: the rent epoch of rent-exempt accounts. */
export const RENT_EXEMPT_EPOCH = 0xffffffffffffffffn;
/** The system program. */
export const SYSTEM_PROGRAM_ID = '11111111111111111111111111111111';

/** How a {@link LiteSvmNode} runs. */
export interface LiteSvmNodeOptions {
  /** Milliseconds per slot (default 400, a cluster's target); 0 stops the timer (slots then move with {@link LiteSvmNode.advance}). */
  readonly slotMs?: number;
  /** The slot it starts at (default 0, as a fresh validator). */
  readonly startSlot?: bigint | number;
  /** Slots `confirmed` lags behind `processed` (default 1). */
  readonly confirmedLag?: number;
  /** Slots `finalized` lags behind `processed` (default 32, about a cluster's lockout depth). */
  readonly finalizedLag?: number;
  /** Reported software version: `getVersion`'s `solana-core`, `context.apiVersion`, the node's `version` (default `2.0.15`). */
  readonly version?: string;
  /** Seed of the node's identity key (default `"tollgate-litesvm"`): the same seed gives the same `pubkey`. */
  readonly identitySeed?: string;
  /** The wall clock, in milliseconds (default `Date.now`): block times and the VM's clock read it (recordings fix it). */
  readonly now?: () => number;
}

/** The default reported software version (an agave release whose RPC answers this node reproduces). */
export const LITESVM_NODE_VERSION = '2.0.15';

/** The native VM's calls the node uses (LiteSVM's wrapper takes kit objects; the node has bytes). */
export type InnerSvm = {
  getAccount(pubkey: Uint8Array): Account | null;
  setAccount(pubkey: Uint8Array, account: Account): void;
  getProgramAccounts(program: Uint8Array): Array<{ address: Uint8Array; account(): Account }>;
  setSigverify(on: boolean): void;
  setBlockhashCheck(on: boolean): void;
  sendLegacyTransaction(bytes: Uint8Array): unknown;
  sendVersionedTransaction(bytes: Uint8Array): unknown;
  simulateLegacyTransaction(bytes: Uint8Array): unknown;
  simulateVersionedTransaction(bytes: Uint8Array): unknown;
};

/** What a node announces, for its WebSocket subscriptions. */
export interface NodeEvents {
  /** A new head slot (its parent is `slot - 1`). */
  slot: [slot: bigint];
  /** A transaction landed in the head block. */
  transaction: [record: TransactionRecord];
  /** These accounts were written (by a transaction, an airdrop or `setAccount`). */
  accounts: [addresses: readonly string[]];
}

/** A LiteSVM VM with a slot clock, read and written by base-58 address. */
export class LiteSvmNode {
  /** The VM. */
  readonly svm: LiteSVM;
  /** The node's identity public key, base-58. */
  readonly identity: string;
  /** Reported software version. */
  readonly version: string;
  /** First four bytes (little-endian u32) of a hash of the active feature ids (LiteSVM enables all). */
  readonly featureSet: number;
  /** Shred version (u16), derived from the identity as a cluster derives it from its genesis. */
  readonly shredVersion: number;
  /** The blocks and transactions since the start slot. */
  readonly ledger: Ledger;
  /** Announces slots, transactions and account writes. */
  readonly events = new EventEmitter<NodeEvents>();
  /** The native VM (raw transactions go here). */
  readonly inner: InnerSvm;
  readonly #inner: InnerSvm;
  readonly #confirmedLag: bigint;
  readonly #finalizedLag: bigint;
  readonly #now: () => number;
  #slot: bigint;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: LiteSvmNodeOptions = {}) {
    this.svm = new LiteSVM();
    // LiteSVM's convenience setAccount always writes rentEpoch 0; the native VM behind it takes the full account.
    this.#inner = (this.svm as unknown as { inner: InnerSvm }).inner;
    this.inner = this.#inner;
    // Blockhash age is the ledger's to judge (150 blocks, as agave), not LiteSVM's single latest hash.
    this.#inner.setBlockhashCheck(false);
    // LiteSVM's own airdrop account has a random key: emptied, so that nodes started alike hold the same
    // accounts (the node's faucet pays airdrops).
    (this.#inner as unknown as { setLamports(lamports: bigint): void }).setLamports(0n);
    this.events.setMaxListeners(0);
    this.version = options.version ?? LITESVM_NODE_VERSION;
    this.#confirmedLag = BigInt(options.confirmedLag ?? 1);
    this.#finalizedLag = BigInt(options.finalizedLag ?? 32);
    const identity = createHash('sha256').update(options.identitySeed ?? 'tollgate-litesvm').digest();
    this.identity = bs58.encode(identity);
    this.shredVersion = identity.readUInt16LE(0) || 1;
    // LiteSVM runs with every feature enabled; agave reports the first 4 bytes of a hash of its feature ids.
    const featureHash = createHash('sha256');
    for (const id of FeatureSet.allEnabled().getActiveFeatures().map((f) => Buffer.from(f)).sort(Buffer.compare)) featureHash.update(id);
    this.featureSet = featureHash.digest().readUInt32LE(0);
    this.#slot = BigInt(options.startSlot ?? 0);
    this.#now = options.now ?? Date.now;
    this.ledger = new Ledger(options.identitySeed ?? 'tollgate-litesvm', this.#slot, Math.floor(this.#now() / 1000));
    this.#syncClock();
    const slotMs = options.slotMs ?? 400;
    if (slotMs > 0) {
      this.#timer = setInterval(() => this.advance(), slotMs);
      this.#timer.unref();
    }
  }

  /** The slot at `commitment` (processed: the head; confirmed and finalized lag behind it). */
  slot(commitment: Commitment = 'finalized'): bigint {
    const lag = commitment === 'processed' ? 0n : commitment === 'confirmed' ? this.#confirmedLag : this.#finalizedLag;
    return this.#slot > lag ? this.#slot - lag : 0n;
  }

  /** The node's wall clock, in milliseconds (the `now` option, `Date.now` by default). */
  now(): number {
    return this.#now();
  }

  /** Moves the head forward by `slots` (default 1) and the VM's clock with it. */
  advance(slots = 1): void {
    const now = Math.floor(this.#now() / 1000);
    for (let i = 0; i < slots; i++) {
      this.#slot += 1n;
      this.ledger.produced(this.#slot, now);
      this.events.emit('slot', this.#slot);
    }
    this.#syncClock();
  }

  /** The head slot's blockhash: what `getLatestBlockhash` gives at `commitment`. */
  latestBlockhash(commitment: Commitment = 'finalized'): { blockhash: string; slot: bigint } {
    const slot = this.slot(commitment);
    return { blockhash: this.ledger.blockhash(slot), slot };
  }

  #syncClock(): void {
    this.svm.warpToSlot(this.#slot);
    const clock = this.svm.getClock();
    const { epoch } = epochOf(this.svm.getEpochSchedule(), this.#slot);
    this.svm.setClock(new Clock(this.#slot, clock.epochStartTimestamp, epoch, epoch + 1n, BigInt(Math.floor(this.#now() / 1000))));
  }

  /** The account at `address` as a node reports it, or null when it does not exist (no lamports). */
  getAccount(address: string): NodeAccount | null {
    const account = this.#inner.getAccount(bs58.decode(address));
    if (account === null || account.lamports() === 0n) return null;
    return {
      lamports: account.lamports(),
      data: account.data(),
      owner: bs58.encode(account.owner()),
      executable: account.executable(),
      rentEpoch: account.rentEpoch(),
    };
  }

  /** Writes an account with every field, `rentEpoch` included. */
  setAccount(address: string, input: AccountInput): void {
    this.#inner.setAccount(
      bs58.decode(address),
      new Account(
        BigInt(input.lamports),
        input.data ?? new Uint8Array(0),
        bs58.decode(input.owner ?? SYSTEM_PROGRAM_ID),
        input.executable ?? false,
        BigInt(input.rentEpoch ?? RENT_EXEMPT_EPOCH),
      ),
    );
    this.events.emit('accounts', [address]);
  }

  /** Accounts owned by `program`, as address and account, by address (the VM's own order changes from run to run). */
  programAccounts(program: string): Array<{ address: string; account: NodeAccount }> {
    const found = this.#inner.getProgramAccounts(bs58.decode(program)).flatMap((entry) => {
      const account = entry.account();
      if (account.lamports() === 0n) return [];
      return [{
        address: bs58.encode(entry.address),
        account: { lamports: account.lamports(), data: account.data(), owner: program, executable: account.executable(), rentEpoch: account.rentEpoch() },
      }];
    });
    return found.sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
  }

  /** Lamports an account of `size` bytes needs to be rent-exempt. */
  rentExemptMinimum(size: number): bigint {
    return this.svm.minimumBalanceForRentExemption(BigInt(size));
  }

  /** Stops the slot timer. Idempotent. */
  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    this.events.removeAllListeners();
  }
}
