import type { CreditLedger } from '../contracts/credit-ledger.js';
import type { RateDecision, RateLimiter } from '../contracts/rate-limiter.js';
import type { Charge, ChargeLimits, Metering } from '../contracts/metering.js';
import { chargeOf } from './ledger-charge.js';
import { isPromise, type MaybePromise } from '../util/maybe-promise.js';

/**
 * The core's {@link Metering}: the key's bucket in a {@link RateLimiter} (named by the key's id, the
 * plan's `creditsPerSecond` as rate and burst), then, if it let the charge through, a debit of a
 * {@link CreditLedger}. Two stores, two steps; each answers synchronously when it can, and the
 * charge does too. Used for every store that registers no `Metering` of its own.
 */
export class LimiterLedgerMetering implements Metering {
  readonly #limiter: RateLimiter;
  readonly #ledger: CreditLedger;

  constructor(limiter: RateLimiter, ledger: CreditLedger) {
    this.#limiter = limiter;
    this.#ledger = ledger;
  }

  charge(keyId: string, credits: number, limits: ChargeLimits, now: number): MaybePromise<Charge> {
    const perSecond = limits.creditsPerSecond;
    if (perSecond === undefined) return this.#debit(keyId, credits, limits, now);
    const rate = this.#limiter.take(keyId, credits, perSecond, perSecond, now);
    if (isPromise(rate)) return rate.then((decision) => this.#afterTake(decision, keyId, credits, limits, now));
    return this.#afterTake(rate, keyId, credits, limits, now);
  }

  #afterTake(decision: RateDecision, keyId: string, credits: number, limits: ChargeLimits, now: number): MaybePromise<Charge> {
    if (!decision.ok) return { ok: false, code: 'RATE_LIMITED', retryAfterMs: decision.retryAfterMs };
    return this.#debit(keyId, credits, limits, now);
  }

  #debit(keyId: string, credits: number, limits: ChargeLimits, now: number): MaybePromise<Charge> {
    const debit = this.#ledger.debit(keyId, credits, limits.dailyCredits, new Date(now));
    return isPromise(debit) ? debit.then((result) => chargeOf(this.#ledger, result)) : chargeOf(this.#ledger, debit);
  }
}
