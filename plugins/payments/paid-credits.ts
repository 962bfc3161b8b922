import type { CreditLedger } from '../../core/store-api.js';

/**
 * Where bought credits go: a balance per key, separate from the plan's daily allowance and used after
 * it. Adding is idempotent by payment id: the store adds the credits and remembers the id in one
 * transaction, so a retry after a crash between the credit and the journal's `markCredited` never adds
 * them twice.
 */
export interface PaidCredits {
  /** Adds `credits` to `keyId` for `paymentId`; false when that payment was added before (nothing changes). */
  add(keyId: string, credits: number, paymentId: string): Promise<boolean>;
  /** The credits `keyId` bought and has not used yet. */
  balance(keyId: string): Promise<number>;
}

/**
 * {@link PaidCredits} in a {@link CreditLedger}'s paid balance (the plugin's default: the gateway's own
 * ledger, so the `meter` stage spends bought credits once the day's are spent): `add` is the ledger's
 * `topUp(keyId, credits, paymentId)`, which adds once per payment id in one store transaction or
 * script; `balance` is the ledger's `paidRemaining`.
 */
export class LedgerPaidCredits implements PaidCredits {
  readonly #ledger: CreditLedger;
  readonly #now: () => number;

  /** `now` (ms since the epoch): the gateway's clock, for the ledger's `balance` (the paid balance has no day). */
  constructor(ledger: CreditLedger, now: () => number = Date.now) {
    this.#ledger = ledger;
    this.#now = now;
  }

  /** See {@link PaidCredits.add}. */
  async add(keyId: string, credits: number, paymentId: string): Promise<boolean> {
    return this.#ledger.topUp(keyId, credits, paymentId);
  }

  /** See {@link PaidCredits.balance}. */
  async balance(keyId: string): Promise<number> {
    return (await this.#ledger.balance(keyId, 0, new Date(this.#now()))).paidRemaining;
  }
}
