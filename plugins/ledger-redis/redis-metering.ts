import { LimiterLedgerMetering, MemoryRateLimiter, type Charge, type ChargeLimits, type Metering, type RateLimiter } from '../../core/store-api.js';
import type { RedisConnection } from './connection.js';
import type { RedisCreditLedger } from './redis-credit-ledger.js';

/**
 * The Redis store's `Metering`: a call's throughput bucket (`<prefix>bucket:{<key id>}`, the bucket a plugin throttling on the key id takes from too) and its debit
 * in one script ({@link RedisCreditLedger.takeAndDebit}, `TAKE_DEBIT`), and the calls of one key that
 * arrive in two event-loop turns (or while the key's previous script is in Redis) in one script for them
 * all (`TAKE_DEBIT_BATCH`). A charge without a
 * bucket (events) is the ledger's debit alone. A taken charge refunds through the ledger, once.
 *
 * While Redis is unreachable, or when the script's command fails (the batch is then cancelled by its
 * id), the connection's policy applies: `refuse` fails the charge with `METERING_UNAVAILABLE`;
 * `allowance` takes the bucket in this instance's memory and the debit from the ledger's local
 * allowance.
 */
export class RedisMetering implements Metering {
  readonly #conn: RedisConnection;
  readonly #ledger: RedisCreditLedger;
  /**
   * The charge in two steps, for when one script cannot do: the bucket in this instance's memory (or
   * `METERING_UNAVAILABLE` under `refuse`), then the ledger's debit, which has its own way without
   * Redis; without a bucket, the debit alone.
   */
  readonly #apart: LimiterLedgerMetering;

  constructor(connection: RedisConnection, ledger: RedisCreditLedger) {
    this.#conn = connection;
    this.#ledger = ledger;
    const local = new MemoryRateLimiter();
    const offline: RateLimiter = {
      take: (bucket, cost, perSecond, burst, now) => {
        if (connection.settings.whenUnavailable === 'refuse') throw connection.unavailable();
        return local.take(bucket, cost, perSecond, burst, now);
      },
    };
    this.#apart = new LimiterLedgerMetering(offline, ledger);
  }

  charge(keyId: string, credits: number, limits: ChargeLimits, now: number): Charge | Promise<Charge> {
    const perSecond = limits.creditsPerSecond;
    if (perSecond === undefined || !this.#conn.ready) return this.#apart.charge(keyId, credits, limits, now);
    return this.#ledger
      .takeAndDebit(this.#conn.names.bucket(keyId), keyId, credits, perSecond, perSecond, limits.dailyCredits, now)
      .catch(() => this.#apart.charge(keyId, credits, limits, now));
  }
}
