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
};

/**
 * Checks settings from code or config (`where` names them in errors) and applies defaults; later sources
 * win over earlier ones.
 *
 * @throws Error naming the offending field.
 */
export function resolveRedisSettings(sources: ReadonlyArray<Readonly<Record<string, unknown>> | undefined>, where = `plugins.${LEDGER_REDIS_PLUGIN}`): ResolvedRedisSettings {
  const merged: Record<string, unknown> = { ...DEFAULTS };
  for (const source of sources) {
    if (source === undefined) continue;
    for (const [name, value] of Object.entries(source)) {
      if (!(name in DEFAULTS)) throw new Error(`${where}.${name}: is not a known field (known: ${Object.keys(DEFAULTS).join(', ')})`);
      if (value !== undefined) merged[name] = value;
    }
  }
  const text = (name: string, pattern?: RegExp): string => {
    const value = merged[name];
    if (typeof value !== 'string' || (pattern !== undefined && !pattern.test(value))) throw new Error(`${where}.${name}: must be a string${pattern === undefined ? '' : ` matching ${pattern}`}`);
    return value;
  };
  const whole = (name: string, min: number): number => {
    const value = merged[name];
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min) throw new Error(`${where}.${name}: must be an integer >= ${min}`);
    return value;
  };
  const policy = merged.whenUnavailable;
  if (policy !== 'refuse' && policy !== 'allowance') throw new Error(`${where}.whenUnavailable: must be one of refuse, allowance`);
  return {
    url: text('url', /^rediss?:\/\//),
    prefix: text('prefix'),
    whenUnavailable: policy,
    localAllowance: whole('localAllowance', 0),
    commandTimeoutMs: whole('commandTimeoutMs', 1),
    connectTimeoutMs: whole('connectTimeoutMs', 1),
    keyCacheMs: whole('keyCacheMs', 0),
    usageFlushMs: whole('usageFlushMs', 1),
    retainDays: whole('retainDays', 1),
  };
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
