import type { Balance, CreditLedger, DebitReceipt, DebitResult } from './credit-ledger.js';
import { nextUtcMidnight, utcDay } from './credit-ledger.js';

/**
 * A {@link CreditLedger} in process memory: exact within one process, lost on restart. Days other than
 * the current and previous one are dropped as the clock moves on.
 */
export class MemoryCreditLedger implements CreditLedger {
  readonly #used = new Map<string, number>();
  readonly #refunded = new WeakSet<DebitReceipt>();
  #today = '';

  debit(keyId: string, credits: number, dailyLimit: number, now: Date): DebitResult {
    const day = this.#roll(now);
    const slot = `${day}|${keyId}`;
    const used = this.#used.get(slot) ?? 0;
    if (used + credits > dailyLimit) {
      return { ok: false, remaining: Math.max(0, dailyLimit - used), resetsAt: nextUtcMidnight(now) };
    }
    this.#used.set(slot, used + credits);
    return { ok: true, receipt: { keyId, day, credits }, remaining: dailyLimit - used - credits };
  }

  refund(receipt: DebitReceipt): void {
    if (this.#refunded.has(receipt)) return;
    this.#refunded.add(receipt);
    const slot = `${receipt.day}|${receipt.keyId}`;
    const used = this.#used.get(slot);
    if (used !== undefined) this.#used.set(slot, Math.max(0, used - receipt.credits));
  }

  balance(keyId: string, dailyLimit: number, now: Date): Balance {
    const day = utcDay(now);
    const used = this.#used.get(`${day}|${keyId}`) ?? 0;
    return { day, used, remaining: Math.max(0, dailyLimit - used), resetsAt: nextUtcMidnight(now) };
  }

  #roll(now: Date): string {
    const day = utcDay(now);
    if (day !== this.#today) {
      const keep = this.#today;
      for (const slot of this.#used.keys()) {
        if (!slot.startsWith(day) && !slot.startsWith(keep)) this.#used.delete(slot);
      }
      this.#today = day;
    }
    return day;
  }
}
