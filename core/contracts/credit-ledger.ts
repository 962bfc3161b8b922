import type { MaybePromise } from '../util/maybe-promise.js';

/** Proof of a debit, needed to refund it (into the day it was taken from). */
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
  /** Credits taken. */
  readonly credits: number;
}

/** A debit that was taken. */
export interface DebitTaken {
  /** Always true. */
  readonly ok: true;
  /** Proof of the debit, to refund it. */
  readonly receipt: DebitReceipt;
  /** Credits left that day. */
  readonly remaining: number;
}

/** A debit refused because the day's balance cannot cover it; nothing was taken. */
export interface DebitRefused {
  /** Always false. */
  readonly ok: false;
  /** Credits left that day. */
  readonly remaining: number;
  /** When the balance resets (the next 00:00 UTC). */
  readonly resetsAt: Date;
}

/** The outcome of a debit attempt. */
export type DebitResult = DebitTaken | DebitRefused;

/** A key's balance for one day. */
export interface Balance {
  /** The UTC day. */
  readonly day: string;
  /** Credits spent that day. */
  readonly used: number;
  /** Credits left that day. */
  readonly remaining: number;
  /** When the balance resets (the next 00:00 UTC). */
  readonly resetsAt: Date;
}

/**
 * Daily credit balances. A debit either takes the whole amount or nothing, atomically: two calls can
 * never both spend the last credits. Implementations: in memory (core), and store plugins.
 */
export interface CreditLedger {
  /** Takes `credits` from the key's balance for the day of `now`, if `dailyLimit` allows. */
  debit(keyId: string, credits: number, dailyLimit: number, now: Date): MaybePromise<DebitResult>;
  /**
   * Gives a debit back, at most once per debit id: refunding twice (or a refund the store applies late,
   * after a timeout and a retry) is a no-op for the second one.
   */
  refund(receipt: DebitReceipt): MaybePromise<void>;
  /** The key's balance on the day of `now`. */
  balance(keyId: string, dailyLimit: number, now: Date): MaybePromise<Balance>;
}
