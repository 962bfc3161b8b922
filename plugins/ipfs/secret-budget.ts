import type { Clock } from '../../core/plugin-api.js';
import type { SecretGuard } from './secret-guard.js';

/** Sources whose bucket is remembered, at most; past it the least recently seen is forgotten. */
const MAX_SOURCES = 10_000;

interface Bucket {
  tokens: number;
  at: number;
}

/** What a {@link SecretCheckBudget} allows. */
export interface SecretCheckRates {
  /** Secret checks per second from one source address. */
  readonly perSource: number;
  /** Secret checks per second over all sources. */
  readonly overall: number;
}

/**
 * The refusal budget of the file-storage API: how many secret checks that need scrypt (a secret not
 * remembered, a refused key's decoy check) this process runs per second, per source address and
 * overall (token buckets, bursts of one second's worth). A check over budget is not run (see
 * {@link SecretGuard} for the answer), whether its key exists or not, so the answer still says nothing of
 * which keys exist. The budget is per process on purpose: it protects this process's CPU.
 */
export class SecretCheckBudget {
  readonly #rates: SecretCheckRates;
  readonly #clock: Clock;
  readonly #sources = new Map<string, Bucket>();
  readonly #overall: Bucket;

  constructor(rates: SecretCheckRates, clock: Clock) {
    this.#rates = rates;
    this.#clock = clock;
    this.#overall = { tokens: rates.overall, at: clock.now() };
  }

  /** Takes one check for `source`: 0 when it may run, else the ms until the budget would allow it. */
  take(source: string): number {
    const now = this.#clock.now();
    let bucket = this.#sources.get(source);
    if (bucket === undefined) {
      if (this.#sources.size >= MAX_SOURCES) this.#sources.delete(this.#sources.keys().next().value!);
      bucket = { tokens: this.#rates.perSource, at: now };
    } else {
      this.#sources.delete(source);
    }
    this.#sources.set(source, bucket);
    const wait = Math.max(refill(bucket, this.#rates.perSource, now), refill(this.#overall, this.#rates.overall, now));
    if (wait > 0) return wait;
    bucket.tokens -= 1;
    this.#overall.tokens -= 1;
    return 0;
  }
}

/** Refills `bucket` for the time passed; the ms until it holds one token (0: it does now). */
function refill(bucket: Bucket, perSecond: number, now: number): number {
  bucket.tokens = Math.min(Math.max(1, perSecond), bucket.tokens + ((now - bucket.at) / 1000) * perSecond);
  bucket.at = now;
  return bucket.tokens >= 1 ? 0 : ((1 - bucket.tokens) / perSecond) * 1000;
}
