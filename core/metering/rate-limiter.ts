import type { RateDecision, RateLimiter } from '../contracts/rate-limiter.js';

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
