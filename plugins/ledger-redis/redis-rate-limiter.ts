import { MemoryRateLimiter, type RateDecision, type RateLimiter } from '../../core/store-api.js';
import type { RedisConnection } from './connection.js';

/**
 * Throughput buckets shared by every gateway instance through Redis: one Lua script refills and takes
 * in one atomic step, so the instances together let through exactly what one bucket allows. A bucket
 * is only a bucket, whatever its name: a call's own bucket and its debit are charged together by
 * {@link RedisMetering}, never here. The time is the calling instance's clock (keep instances' clocks
 * in sync, as NTP does); a bucket never refills backwards. While Redis is unreachable: `refuse` fails
 * the call, `allowance` limits per instance.
 */
export class RedisRateLimiter implements RateLimiter {
  readonly #conn: RedisConnection;
  readonly #local = new MemoryRateLimiter();

  constructor(connection: RedisConnection) {
    this.#conn = connection;
  }

  take(bucket: string, cost: number, perSecond: number, burst: number, now: number): RateDecision | Promise<RateDecision> {
    if (!this.#conn.ready) return this.#offline(bucket, cost, perSecond, burst, now);
    return this.#conn.client.tgTake(this.#conn.names.bucket(bucket), cost, perSecond, burst, now).then(
      ([ok, retryAfterMs]): RateDecision => (ok === 1 ? { ok: true } : { ok: false, retryAfterMs }),
      (error: unknown) => {
        this.#conn.failed(error);
        return this.#offline(bucket, cost, perSecond, burst, now);
      },
    );
  }

  #offline(bucket: string, cost: number, perSecond: number, burst: number, now: number): RateDecision {
    if (this.#conn.settings.whenUnavailable === 'refuse') throw this.#conn.unavailable();
    return this.#local.take(bucket, cost, perSecond, burst, now);
  }
}
