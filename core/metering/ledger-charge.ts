import type { CreditLedger, DebitReceipt, DebitResult } from '../contracts/credit-ledger.js';
import type { ChargeExhausted, Charged } from '../contracts/metering.js';
import type { MaybePromise } from '../util/maybe-promise.js';

/** A debit a credit ledger took, as a {@link Charged} whose refund goes back to that ledger once. */
class LedgerCharge implements Charged {
  readonly ok = true;
  readonly receipt: DebitReceipt;
  readonly remaining: number;
  readonly paidRemaining: number;
  readonly #ledger: CreditLedger;
  #refunded = false;
  /** The first refund's outcome: a second refund settles with it and does nothing. */
  #outcome: MaybePromise<void> = undefined;

  constructor(ledger: CreditLedger, receipt: DebitReceipt, remaining: number, paidRemaining: number) {
    this.#ledger = ledger;
    this.receipt = receipt;
    this.remaining = remaining;
    this.paidRemaining = paidRemaining;
  }

  refund(): MaybePromise<void> {
    if (this.#refunded) return this.#outcome;
    this.#refunded = true;
    try {
      this.#outcome = this.#ledger.refund(this.receipt);
    } catch (error) {
      this.#outcome = Promise.reject(error);
    }
    return this.#outcome;
  }
}

/**
 * The charge a credit ledger's debit amounts to: taken (refunded through `ledger`, once), or refused
 * with `CREDITS_EXHAUSTED`. For stores that implement `Metering` over their own ledger.
 *
 * @example
 * ```ts
 * const debit = await ledger.debit(keyId, credits, limits.dailyCredits, new Date(now));
 * return chargeOf(ledger, debit);
 * ```
 */
export function chargeOf(ledger: CreditLedger, debit: DebitResult): Charged | ChargeExhausted {
  if (debit.ok) return new LedgerCharge(ledger, debit.receipt, debit.remaining, debit.paidRemaining);
  return { ok: false, code: 'CREDITS_EXHAUSTED', remaining: debit.remaining, paidRemaining: debit.paidRemaining, resetsAt: debit.resetsAt };
}
