// The rate-limiter port: per-key request buckets, in memory or in a shared store.
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
