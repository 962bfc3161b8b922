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

/** {@link PaidCredits} in memory, until the ledgers hold a paid balance (see the plugin's README). */
export class MemoryPaidCredits implements PaidCredits {
  readonly #balances = new Map<string, number>();
  readonly #applied = new Set<string>();

  /** See {@link PaidCredits.add}. */
  async add(keyId: string, credits: number, paymentId: string): Promise<boolean> {
    if (this.#applied.has(paymentId)) return false;
    this.#applied.add(paymentId);
    this.#balances.set(keyId, (this.#balances.get(keyId) ?? 0) + credits);
    return true;
  }

  /** See {@link PaidCredits.balance}. */
  async balance(keyId: string): Promise<number> {
    return this.#balances.get(keyId) ?? 0;
  }
}
