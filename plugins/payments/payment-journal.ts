import type { PaymentPayload, PaymentRequirements } from './x402-types.js';

/**
 * Where a payment is in its life, only forward:
 *
 * - `settling`: recorded before the facilitator's settle, with the signed authorization; the transfer may
 *   or may not be on chain (a crash here is resolved by asking the token, see the desk's `recover()`);
 * - `settled`: the transfer is on chain (with its transaction), the credit not yet added;
 * - `credited`: the bundle's credits were added;
 * - `failed`: it never settled and never will (the settle was refused, or the authorization expired unused).
 *
 * `settling` → `settled` | `failed`; `settled` → `credited`; and `failed` → `settled` when the chain shows
 * that a payment given up on did settle (a transaction that mined after its settle was answered as failed).
 */
export type PaymentState = 'settling' | 'settled' | 'credited' | 'failed';

/** What a payment buys, and from whom to whom: the terms every journal record shares. */
export interface PaymentTerms {
  /** The payment's identity: `<network>/<asset>/<payer>/<authorization nonce>`, lower case (see {@link paymentIdOf}). */
  readonly id: string;
  /** The key it buys credits for. */
  readonly keyId: string;
  /** The plan whose bundle it bought. */
  readonly plan: string;
  /** Credits it buys. */
  readonly credits: number;
  /** The payer's address, as signed (the authorizer). */
  readonly payer: string;
  /** CAIP-2 network. */
  readonly network: string;
  /** The token paid in. */
  readonly asset: string;
  /** Amount paid, in the token's atomic units. */
  readonly amount: string;
  /** Who was paid. */
  readonly payTo: string;
}

/** A payment about to be settled, as the journal records it before the facilitator's settle is asked. */
export interface SettlingPayment extends PaymentTerms {
  /** The authorization's nonce (32 bytes, hex). */
  readonly nonce: string;
  /** The authorization's `validBefore` (seconds since the epoch): after it, an unused authorization can never settle. */
  readonly validBefore: number;
  /** The signed payment, as the client sent it (kept so that recovery can settle it). */
  readonly payload: PaymentPayload;
  /** The requirement it is settled against (the offer's, never the client's copy). */
  readonly requirements: PaymentRequirements;
  /** When its settle began (ms since the epoch). */
  readonly startedAt: number;
}

/** A settled payment, as the journal records it when no `settling` entry came before (imports, tests). */
export interface SettledPayment extends PaymentTerms {
  /** The settlement's transaction hash. */
  readonly transaction: string;
  /** When it was settled (ms since the epoch). */
  readonly settledAt: number;
}

/** A payment in the journal. */
export interface JournalEntry extends PaymentTerms {
  /** Where it is. */
  readonly state: PaymentState;
  /** The authorization's nonce, when the entry began `settling` (undefined for one recorded settled). */
  readonly nonce: string | undefined;
  /** The authorization's `validBefore` in seconds, when known. */
  readonly validBefore: number | undefined;
  /** The signed payment, when the entry began `settling`. */
  readonly payload: PaymentPayload | undefined;
  /** The requirement it is settled against, when the entry began `settling`. */
  readonly requirements: PaymentRequirements | undefined;
  /** When it was first recorded (ms since the epoch): its settle began, or it was recorded settled. */
  readonly startedAt: number;
  /** The settlement's transaction hash, once `settled` (`''` when the chain says it settled and its transaction was not found). */
  readonly transaction: string | undefined;
  /** When it was known settled (ms since the epoch). */
  readonly settledAt: number | undefined;
  /** When its credit was added (ms since the epoch), once `credited`. */
  readonly creditedAt: number | undefined;
  /** Why it failed, once `failed`. */
  readonly failure: string | undefined;
}

/** Which entries {@link PaymentJournal.list} answers: by key, by payer, or both. */
export interface JournalQuery {
  /** Only this key's payments. */
  readonly keyId?: string;
  /** Only this payer's payments (an address; any case). */
  readonly payer?: string;
  /** At most this many, newest first (default 100). */
  readonly limit?: number;
}

/** The default and largest `limit` of {@link PaymentJournal.list}. */
export const JOURNAL_LIST_LIMIT = 1_000;

/**
 * The payment journal: the order begin (`settling`) → settle → `settled` → credit → `credited`, kept
 * exactly once per payment. A payment is recorded `settling`, with its signed authorization, before the
 * facilitator is asked to settle it, so a crash at any point leaves an entry that the desk's `recover()`
 * resolves at start (by asking the token whether the authorization was used). Shared by every instance
 * of a fleet (SQLite on one machine, Redis across machines), so a payment replayed to another instance
 * finds its entry. Every state move is conditioned on the state before it, so two instances never both
 * make one.
 */
export interface PaymentJournal {
  /** Records a payment about to be settled (`settling`); false when its id is already in the journal (nothing is changed). */
  begin(payment: SettlingPayment): Promise<boolean>;
  /** Records a payment already settled (`settled`); false when its id is already in the journal (nothing is changed). */
  record(payment: SettledPayment): Promise<boolean>;
  /** Moves `id` from `settling` (or `failed`) to `settled` with its transaction; false when it is in neither. */
  markSettled(id: string, transaction: string, at: number): Promise<boolean>;
  /** Moves `id` from `settling` to `failed`; false when it is not `settling`. */
  markFailed(id: string, failure: string, at: number): Promise<boolean>;
  /** Moves `id` from `settled` to `credited`; false when it is not `settled` (unknown, or credited already). */
  markCredited(id: string, at: number): Promise<boolean>;
  /** The entry of `id`, if any. */
  get(id: string): Promise<JournalEntry | undefined>;
  /** Every entry still `settling` or `settled`, oldest first: what `recover()` resolves and credits. */
  unfinished(): Promise<readonly JournalEntry[]>;
  /** Every entry still `settled` (not credited), oldest first. */
  uncredited(): Promise<readonly JournalEntry[]>;
  /** Entries by key and/or payer, newest first. */
  list(query: JournalQuery): Promise<readonly JournalEntry[]>;
}

/**
 * The identity of an EIP-3009 payment: its network, token, payer and authorization nonce, lower case.
 * The token itself refuses a second use of a nonce by its payer, so two payments with one id cannot both
 * settle, and the journal keeps one entry per id.
 */
export function paymentIdOf(network: string, asset: string, payer: string, nonce: string): string {
  return `${network}/${asset}/${payer}/${nonce}`.toLowerCase();
}

/** The entry a `begin` makes. */
export function settlingEntry(p: SettlingPayment): JournalEntry {
  return {
    id: p.id, keyId: p.keyId, plan: p.plan, credits: p.credits, payer: p.payer, network: p.network, asset: p.asset, amount: p.amount, payTo: p.payTo,
    state: 'settling', nonce: p.nonce, validBefore: p.validBefore, payload: p.payload, requirements: p.requirements, startedAt: p.startedAt,
    transaction: undefined, settledAt: undefined, creditedAt: undefined, failure: undefined,
  };
}

/** The entry a `record` makes. */
export function settledEntry(p: SettledPayment): JournalEntry {
  return {
    id: p.id, keyId: p.keyId, plan: p.plan, credits: p.credits, payer: p.payer, network: p.network, asset: p.asset, amount: p.amount, payTo: p.payTo,
    state: 'settled', nonce: undefined, validBefore: undefined, payload: undefined, requirements: undefined, startedAt: p.settledAt,
    transaction: p.transaction, settledAt: p.settledAt, creditedAt: undefined, failure: undefined,
  };
}

/** The `limit` of a query, clamped to 1..{@link JOURNAL_LIST_LIMIT}. */
export function listLimit(query: JournalQuery): number {
  const limit = query.limit ?? 100;
  return Math.max(1, Math.min(JOURNAL_LIST_LIMIT, Math.floor(limit)));
}
