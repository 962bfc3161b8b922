import type { MaybePromise } from '../util/maybe-promise.js';

/** A throughput check that passed; the tokens were taken. */
export interface RateAllowed {
  /** Always true. */
  readonly ok: true;
}

/** A throughput check that failed; nothing was taken. */
export interface RateRefused {
  /** Always false. */
  readonly ok: false;
  /** How long until enough tokens are back, in ms. */
  readonly retryAfterMs: number;
}

/** The outcome of a throughput check. */
export type RateDecision = RateAllowed | RateRefused;

/** Throughput limits (token buckets) per key. */
export interface RateLimiter {
  /**
   * Takes `cost` tokens from the bucket `bucket` that refills at `perSecond` tokens a second and holds at
   * most `burst` tokens; refuses without taking anything when there are not enough.
   */
  take(bucket: string, cost: number, perSecond: number, burst: number, now: number): MaybePromise<RateDecision>;
}

/** A token-bucket {@link RateLimiter} in process memory. */
export class MemoryRateLimiter implements RateLimiter {
  readonly #buckets = new Map<string, { tokens: number; at: number }>();

  take(bucket: string, cost: number, perSecond: number, burst: number, now: number): RateDecision {
    let state = this.#buckets.get(bucket);
    if (state === undefined) {
      state = { tokens: burst, at: now };
      this.#buckets.set(bucket, state);
    } else if (now > state.at) {
      state.tokens = Math.min(burst, state.tokens + ((now - state.at) / 1000) * perSecond);
      state.at = now;
    }
    // A call costing more than the whole bucket can still pass when the bucket is full, or it never could.
    const need = Math.min(cost, burst);
    if (state.tokens >= need) {
      state.tokens -= need;
      return { ok: true };
    }
    return { ok: false, retryAfterMs: Math.ceil(((need - state.tokens) / perSecond) * 1000) };
  }
}
