import { validateSettings } from '../../core/index.js';

/** The plugin's name, and the key of its settings under `plugins` in the config. */
export const LEDGER_REDIS_PLUGIN = 'ledger-redis';

/**
 * What the gateway does while Redis cannot be reached:
 * - `refuse`: refuse every metered call with `METERING_UNAVAILABLE` (HTTP 503, `Retry-After`); nothing is
 *   served that is not charged.
 * - `allowance`: keep serving keys already known to this instance from a local allowance of
 *   `localAllowance` credits per key and UTC day (never more than the plan's daily balance has left), with
 *   throughput limited per instance; once Redis is back, the credits spent are added to the shared
 *   balances. A key may overspend by at most `localAllowance` × instances per day.
 */
export type UnavailablePolicy = 'refuse' | 'allowance';

/** Settings of the Redis store (`plugins.ledger-redis` in the config; the config wins over code). */
export interface RedisLedgerSettings {
  /** Redis URL, `redis://[:password@]host:port[/db]` or `rediss://` for TLS (default `redis://127.0.0.1:6379`). */
  readonly url?: string;
  /** Prefix of every Redis key, so several gateways (or environments) can share one Redis (default `tollgate:`). */
  readonly prefix?: string;
  /** Policy while Redis is unreachable (default `refuse`). */
  readonly whenUnavailable?: UnavailablePolicy;
  /** Credits per key, instance and UTC day served while Redis is unreachable, with the `allowance` policy (default 100000). */
  readonly localAllowance?: number;
  /** How long a Redis command may take before it counts as failed, in ms (default 1000). */
  readonly commandTimeoutMs?: number;
  /** How long the gateway waits for Redis at start before it gives up, in ms (default 5000). */
  readonly connectTimeoutMs?: number;
  /** How long a key lookup is cached by an instance, in ms (default 5000); changes made through any instance reach the others at once over pub/sub. */
  readonly keyCacheMs?: number;
  /** Usage counters are added up in memory and written every this many ms (default 250). */
  readonly usageFlushMs?: number;
  /** Days balances and usage are kept after their day ended; Redis expires them by itself (default 90). */
  readonly retainDays?: number;
  /**
   * How long Redis remembers that a debit, refund or usage batch was applied, in ms (default 600000): a
   * write retried, or applied late after a timeout, within this window takes effect once. Writes still
   * waiting for Redis after this long are dropped (and logged) rather than risk applying them twice.
   */
  readonly idempotencyWindowMs?: number;
  /** Writes (refunds, cancelled debits, usage batches) held at most while Redis is away; beyond, new ones are dropped and logged (default 100000). */
  readonly maxPendingWrites?: number;
}

/** Settings with every default applied. */
export interface ResolvedRedisSettings {
  /** See {@link RedisLedgerSettings.url}. */
  readonly url: string;
  /** See {@link RedisLedgerSettings.prefix}. */
  readonly prefix: string;
  /** See {@link RedisLedgerSettings.whenUnavailable}. */
  readonly whenUnavailable: UnavailablePolicy;
  /** See {@link RedisLedgerSettings.localAllowance}. */
  readonly localAllowance: number;
  /** See {@link RedisLedgerSettings.commandTimeoutMs}. */
  readonly commandTimeoutMs: number;
  /** See {@link RedisLedgerSettings.connectTimeoutMs}. */
  readonly connectTimeoutMs: number;
  /** See {@link RedisLedgerSettings.keyCacheMs}. */
  readonly keyCacheMs: number;
  /** See {@link RedisLedgerSettings.usageFlushMs}. */
  readonly usageFlushMs: number;
  /** See {@link RedisLedgerSettings.retainDays}. */
  readonly retainDays: number;
  /** See {@link RedisLedgerSettings.idempotencyWindowMs}. */
  readonly idempotencyWindowMs: number;
  /** See {@link RedisLedgerSettings.maxPendingWrites}. */
  readonly maxPendingWrites: number;
}

const DEFAULTS: ResolvedRedisSettings = {
  url: 'redis://127.0.0.1:6379',
  prefix: 'tollgate:',
  whenUnavailable: 'refuse',
  localAllowance: 100_000,
  commandTimeoutMs: 1000,
  connectTimeoutMs: 5000,
  keyCacheMs: 5000,
  usageFlushMs: 250,
  retainDays: 90,
  idempotencyWindowMs: 600_000,
  maxPendingWrites: 100_000,
};

/** The settings' schema: unknown or bad fields are refused by name, in the gateway's configuration format. */
const SETTINGS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    url: { type: 'string', pattern: '^rediss?://', default: DEFAULTS.url },
    prefix: { type: 'string', default: DEFAULTS.prefix },
    whenUnavailable: { enum: ['refuse', 'allowance'], default: DEFAULTS.whenUnavailable },
    localAllowance: { type: 'integer', minimum: 0, default: DEFAULTS.localAllowance },
    commandTimeoutMs: { type: 'integer', minimum: 1, default: DEFAULTS.commandTimeoutMs },
    connectTimeoutMs: { type: 'integer', minimum: 1, default: DEFAULTS.connectTimeoutMs },
    keyCacheMs: { type: 'integer', minimum: 0, default: DEFAULTS.keyCacheMs },
    usageFlushMs: { type: 'integer', minimum: 1, default: DEFAULTS.usageFlushMs },
    retainDays: { type: 'integer', minimum: 1, default: DEFAULTS.retainDays },
    idempotencyWindowMs: { type: 'integer', minimum: 1000, default: DEFAULTS.idempotencyWindowMs },
    maxPendingWrites: { type: 'integer', minimum: 1, default: DEFAULTS.maxPendingWrites },
  },
} as const;

/**
 * Checks settings from code or config (`where` names them in errors) and applies defaults; later sources
 * win over earlier ones.
 *
 * @throws ConfigError naming each offending field.
 */
export function resolveRedisSettings(sources: ReadonlyArray<object | undefined>, where = `plugins.${LEDGER_REDIS_PLUGIN}`): ResolvedRedisSettings {
  return validateSettings<ResolvedRedisSettings>(SETTINGS_SCHEMA, sources, where);
}

/** `host:port` of a Redis URL, without credentials: what logs and errors may show. */
export function redisAddress(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port === '' ? '6379' : parsed.port}`;
  } catch {
    return '(invalid Redis URL)';
  }
}
