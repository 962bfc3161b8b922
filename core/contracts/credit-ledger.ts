import type { MaybePromise } from '../util/maybe-promise.js';

/**
 * Proof of a debit, needed to refund it: the day part back into the day it was taken from, the paid part
 * back into the paid balance.
 */
export interface DebitReceipt {
  /**
   * The debit's id (see {@link newDebitId}), unique per call: a ledger applies the debit and its refund
   * at most once each, whatever is retried or times out.
   */
  readonly id: string;
  /** The key's id. */
  readonly keyId: string;
  /** The UTC day (`YYYY-MM-DD`) the credits were taken from. */
  readonly day: string;
  /** Credits taken in all: `credits - paid` from the day's allowance, `paid` from the paid balance. */
  readonly credits: number;
  /** Credits of this debit taken from the key's paid (bought) balance; 0 when the day covered it all. */
  readonly paid: number;
}

/** A debit that was taken. */
export interface DebitTaken {
  /** Always true. */
  readonly ok: true;
  /** Proof of the debit, to refund it. */
  readonly receipt: DebitReceipt;
  /** Credits left that day. */
  readonly remaining: number;
  /** Credits left in the key's paid balance. */
  readonly paidRemaining: number;
}

/**
 * A debit refused because the day's balance and the paid balance together cannot cover it; nothing was
 * taken from either.
 */
export interface DebitRefused {
  /** Always false. */
  readonly ok: false;
  /** Credits left that day. */
  readonly remaining: number;
  /** Credits left in the key's paid balance. */
  readonly paidRemaining: number;
  /** When the balance resets (the next 00:00 UTC). */
  readonly resetsAt: Date;
}

/** The outcome of a debit attempt. */
export type DebitResult = DebitTaken | DebitRefused;

/** A key's balance for one day, and its paid balance. */
export interface Balance {
  /** The UTC day. */
  readonly day: string;
  /** Credits spent that day. */
  readonly used: number;
  /** Credits left that day. */
  readonly remaining: number;
  /** Credits left in the key's paid balance (bought or topped up; never reset). */
  readonly paidRemaining: number;
  /** When the day's balance resets (the next 00:00 UTC). */
  readonly resetsAt: Date;
}

/**
 * A key's credits, in two balances: the plan's daily allowance (per UTC day, reset at midnight) and a
 * paid balance (credits bought, for example through x402 payments, or topped up by an operator; never
 * reset, never expiring). A debit takes from the day first and what the day cannot cover from the paid
 * balance, all or nothing, atomically: two calls can never both spend the last credits of either.
 * Implementations: in memory (core), and store plugins.
 */
export interface CreditLedger {
  /**
   * Takes `credits` for the day of `now`: from the day's balance as far as `dailyLimit` allows, the rest
   * from the key's paid balance, in one step (one store operation reading both); or nothing, when the two
   * together cannot cover it. The receipt says how much came from the paid balance.
   */
  debit(keyId: string, credits: number, dailyLimit: number, now: Date): MaybePromise<DebitResult>;
  /**
   * Gives a debit back, each part where it was taken from (the day part into its day, the paid part into
   * the paid balance), at most once per debit id: refunding twice (or a refund the store applies late,
   * after a timeout and a retry) is a no-op for the second one.
   */
  refund(receipt: DebitReceipt): MaybePromise<void>;
  /**
   * Adds `credits` to the key's paid balance, once per `topUpId` (a payment's id, an operator's
   * reference): the store adds them and remembers the id in one transaction or script, so a top-up sent
   * again (after a crash, a retry, from a second instance) changes nothing. False when that id was
   * applied before.
   */
  topUp(keyId: string, credits: number, topUpId: string): MaybePromise<boolean>;
  /** The key's balance on the day of `now`. */
  balance(keyId: string, dailyLimit: number, now: Date): MaybePromise<Balance>;
}
