import type { Balance, CreditLedger, DebitReceipt, DebitResult } from '../contracts/credit-ledger.js';
import { nextUtcMidnight, UtcDayCache } from '../util/utc-day.js';
import { newDebitId } from './debit-id.js';

/**
 * A {@link CreditLedger} in process memory: exact within one process, lost on restart. Days other than
 * the current and previous one are dropped as the clock moves on (a refund of a debit from a dropped day
 * is a no-op, its paid part too). Paid balances and the ids of the top-ups applied are kept for good.
 */
export class MemoryCreditLedger implements CreditLedger {
  /** Credits used, by UTC day and then by key id. */
  readonly #days = new Map<string, Map<string, number>>();
  /** Ids of the debits refunded, by UTC day (dropped with the day). */
  readonly #refunded = new Map<string, Set<string>>();
  /** Paid credits left, by key id. */
  readonly #paid = new Map<string, number>();
  /** Ids of the top-ups applied. */
  readonly #topUps = new Set<string>();
  readonly #dayCache = new UtcDayCache();
  #today = '';

  debit(keyId: string, credits: number, dailyLimit: number, now: Date): DebitResult {
    const day = this.#roll(now);
    const keys = this.#keysOf(day);
    const used = keys.get(keyId) ?? 0;
    const paidLeft = this.#paid.get(keyId) ?? 0;
    const dayLeft = Math.max(0, dailyLimit - used);
    const fromDay = Math.min(credits, dayLeft);
    const fromPaid = credits - fromDay;
    if (fromPaid > paidLeft) {
      return { ok: false, remaining: dayLeft, paidRemaining: paidLeft, resetsAt: nextUtcMidnight(now) };
    }
    if (fromDay > 0) keys.set(keyId, used + fromDay);
    if (fromPaid > 0) this.#paid.set(keyId, paidLeft - fromPaid);
    return {
      ok: true,
      receipt: { id: newDebitId(), keyId, day, credits, paid: fromPaid },
      remaining: dayLeft - fromDay,
      paidRemaining: paidLeft - fromPaid,
    };
  }

  refund(receipt: DebitReceipt): void {
    const keys = this.#days.get(receipt.day);
    if (keys === undefined) return;
    let refunded = this.#refunded.get(receipt.day);
    if (refunded === undefined) this.#refunded.set(receipt.day, (refunded = new Set()));
    if (refunded.has(receipt.id)) return;
    refunded.add(receipt.id);
    const paid = receipt.paid;
    const used = keys.get(receipt.keyId);
    if (used !== undefined) keys.set(receipt.keyId, Math.max(0, used - (receipt.credits - paid)));
    if (paid > 0) this.#paid.set(receipt.keyId, (this.#paid.get(receipt.keyId) ?? 0) + paid);
  }

  topUp(keyId: string, credits: number, topUpId: string): boolean {
    if (this.#topUps.has(topUpId)) return false;
    this.#topUps.add(topUpId);
    this.#paid.set(keyId, (this.#paid.get(keyId) ?? 0) + credits);
    return true;
  }

  balance(keyId: string, dailyLimit: number, now: Date): Balance {
    const day = this.#dayCache.dayOf(now.getTime());
    const used = this.#days.get(day)?.get(keyId) ?? 0;
    return { day, used, remaining: Math.max(0, dailyLimit - used), paidRemaining: this.#paid.get(keyId) ?? 0, resetsAt: nextUtcMidnight(now) };
  }

  #keysOf(day: string): Map<string, number> {
    let keys = this.#days.get(day);
    if (keys === undefined) this.#days.set(day, (keys = new Map()));
    return keys;
  }

  /** The day of `now`; when it is a new day, forgets every day but it and the one before. */
  #roll(now: Date): string {
    const day = this.#dayCache.dayOf(now.getTime());
    if (day !== this.#today) {
      const previous = this.#today;
      for (const known of this.#days.keys()) {
        if (known !== day && known !== previous) {
          this.#days.delete(known);
          this.#refunded.delete(known);
        }
      }
      this.#today = day;
    }
    return day;
  }
}
