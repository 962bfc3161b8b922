import type { Logger } from 'pino';
import { RedisConnection } from './connection.js';
import { resolveRedisSettings, type RedisLedgerSettings, type ResolvedRedisSettings } from './settings.js';
import { RedisCreditLedger } from './redis-credit-ledger.js';
import { RedisRateLimiter } from './redis-rate-limiter.js';
import { RedisMetering } from './redis-metering.js';
import { RedisKeyRegistry } from './redis-key-registry.js';
import { RedisPlanRegistry } from './redis-plan-registry.js';
import { RedisUsageRecorder } from './redis-usage-recorder.js';

/** Keys, plans, balances, throughput buckets and usage in one Redis, shared by every gateway instance. */
export interface RedisStore {
  /** The settings it was created with. */
  readonly settings: ResolvedRedisSettings;
  /** The connection. */
  readonly connection: RedisConnection;
  /** Daily balances. */
  readonly ledger: RedisCreditLedger;
  /** Throughput buckets, by name (plugins' own: `ipfs-add:<key id>`, say). */
  readonly limiter: RedisRateLimiter;
  /** A call's charge: its key's bucket and debit in one script. */
  readonly metering: RedisMetering;
  /** API keys (hashed). */
  readonly keys: RedisKeyRegistry;
  /** Plans operators manage. */
  readonly plans: RedisPlanRegistry;
  /** Usage per key, day and method. */
  readonly usage: RedisUsageRecorder;
  /**
   * Connects and subscribes to key and plan changes, retrying while Redis is slow to answer.
   *
   * @throws Error when Redis cannot be reached, or the subscriptions made, within `startTimeoutMs`.
   */
  open(): Promise<void>;
  /** Writes what is pending (usage, local debits) if Redis is reachable, and disconnects. Idempotent. */
  close(): Promise<void>;
}

/**
 * Creates the store for `settings` (not yet connected: call `open()`), outside any gateway: for the
 * CLI, scripts and tests.
 *
 * @example
 * ```ts
 * const store = createRedisStore({ url: 'redis://10.0.0.7:6379' });
 * await store.open();
 * console.log(await store.usage.usage('acme', '2026-01-31'));
 * await store.close();
 * ```
 */
export function createRedisStore(settings: RedisLedgerSettings | ResolvedRedisSettings = {}, logger?: Logger): RedisStore {
  const resolved = resolveRedisSettings([settings as Readonly<Record<string, unknown>>]);
  const connection = new RedisConnection(resolved, logger);
  const keys = new RedisKeyRegistry(connection);
  const plans = new RedisPlanRegistry(connection);
  const ledger = new RedisCreditLedger(connection);
  let closing: Promise<void> | undefined;
  return {
    settings: resolved,
    connection,
    ledger,
    limiter: new RedisRateLimiter(connection),
    metering: new RedisMetering(connection, ledger),
    keys,
    plans,
    usage: new RedisUsageRecorder(connection),
    async open() {
      // One deadline for the whole start: a slow Redis or Cluster delays it, up to startTimeoutMs.
      const deadline = Date.now() + resolved.startTimeoutMs;
      await connection.connect(deadline);
      try {
        await keys.start(deadline);
        await plans.start(deadline);
      } catch (error) {
        await keys.stop();
        await connection.close();
        throw error;
      }
    },
    close() {
      closing ??= (async () => {
        // Usage, refunds and settlements waiting for Redis are written before the connection closes. When
        // Redis is reconnecting at that moment (it just restarted, say), that waits for it, at most
        // `connectTimeoutMs`; what still cannot be written then is lost, and said so.
        if (!(await connection.whenReady(resolved.connectTimeoutMs))) {
          logger?.warn({ redis: connection.address }, 'closing while Redis is unreachable: usage and refunds waiting for it are not written');
        }
        await connection.catchUp();
        await keys.stop();
        await plans.stop();
        await connection.close();
      })();
      return closing;
    },
  };
}
