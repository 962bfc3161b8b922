import { validateSettings } from '../../core/plugin-api.js';

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
  /**
   * Redis URL, `redis://[:password@]host:port[/db]` or `rediss://` for TLS (default `redis://127.0.0.1:6379`).
   * With `cluster` or `sentinels`, only its user name, password and scheme apply, to every node.
   */
  readonly url?: string;
  /** A Redis Cluster instead of one Redis: some of its nodes (`host:port`); the others are discovered. */
  readonly cluster?: RedisClusterSettings;
  /** Redis Sentinel instead of one fixed Redis: the sentinels (`host:port`), which name the master of {@link RedisLedgerSettings.name}. */
  readonly sentinels?: readonly string[];
  /** The master's name the sentinels watch (with `sentinels`). */
  readonly name?: string;
  /** Prefix of every Redis key, so several gateways (or environments) can share one Redis (default `tollgate:`). */
  readonly prefix?: string;
  /** Policy while Redis is unreachable (default `refuse`). */
  readonly whenUnavailable?: UnavailablePolicy;
  /** Credits per key, instance and UTC day served while Redis is unreachable, with the `allowance` policy (default 100000). */
  readonly localAllowance?: number;
  /** How long a Redis command may take before it counts as failed, in ms (default 1000). */
  readonly commandTimeoutMs?: number;
  /** How long one attempt to connect to Redis may take, in ms (default 5000); while Redis is unreachable at start, each such wait is logged. */
  readonly connectTimeoutMs?: number;
  /**
   * How long the gateway keeps trying at start to reach Redis and subscribe to key and plan changes, in ms
   * (default 60000), retrying with backoff: a Redis that starts late, or a Cluster still electing masters
   * (a rolling restart during a failover), delays the start; past it, the start fails and says why.
   */
  readonly startTimeoutMs?: number;
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
  /**
   * Replicas that must hold a debit, refund or usage write before it counts (Redis `WAIT`; default 0).
   * Redis replicates asynchronously: a master killed before its replica took a debit loses it, and the
   * promoted replica shows a call served but not charged. With 1 (a Cluster or Sentinel with a replica
   * per master), a call is served only once its debit is on a replica; a write no replica took within half
   * of `commandTimeoutMs` counts as failed: the debit is cancelled by its id and the call refused with
   * `METERING_UNAVAILABLE`, a refund or usage batch is sent again. Costs one round trip to the replica per
   * write (see docs/operations.md).
   */
  readonly replicaAcks?: number;
}

/** The `cluster` section of {@link RedisLedgerSettings}. */
export interface RedisClusterSettings {
  /** Seed nodes, `host:port` (at least one; more, so that a start works while one is down). */
  readonly nodes: readonly string[];
}

/** Settings with every default applied. */
export interface ResolvedRedisSettings {
  /** See {@link RedisLedgerSettings.url}. */
  readonly url: string;
  /** See {@link RedisLedgerSettings.cluster}. */
  readonly cluster?: RedisClusterSettings | undefined;
  /** See {@link RedisLedgerSettings.sentinels}. */
  readonly sentinels?: readonly string[] | undefined;
  /** See {@link RedisLedgerSettings.name}. */
  readonly name?: string | undefined;
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
  /** See {@link RedisLedgerSettings.startTimeoutMs}. */
  readonly startTimeoutMs: number;
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
  /** See {@link RedisLedgerSettings.replicaAcks}. */
  readonly replicaAcks: number;
}

const DEFAULTS: ResolvedRedisSettings = {
  url: 'redis://127.0.0.1:6379',
  prefix: 'tollgate:',
  whenUnavailable: 'refuse',
  localAllowance: 100_000,
  commandTimeoutMs: 1000,
  connectTimeoutMs: 5000,
  startTimeoutMs: 60_000,
  keyCacheMs: 5000,
  usageFlushMs: 250,
  retainDays: 90,
  idempotencyWindowMs: 600_000,
  maxPendingWrites: 100_000,
  replicaAcks: 0,
};

/** A `host:port` (a name, an IPv4 address or a bracketed IPv6 one, then a port). */
const HOST_PORT = { type: 'string', pattern: '^(\\[[0-9A-Fa-f:.]+\\]|[^:\\s/\\[\\]]+):[0-9]{1,5}$', problem: 'must be host:port' } as const;

/** Settings that only make sense together, or not together. */
function topologyProblems(settings: ResolvedRedisSettings): string[] {
  const problems: string[] = [];
  if (settings.cluster !== undefined && settings.sentinels !== undefined) problems.push('cluster: cannot be used with sentinels (a Redis Cluster fails over by itself)');
  if (settings.sentinels !== undefined && settings.name === undefined) problems.push("name: required with sentinels (the master's name they watch)");
  if (settings.name !== undefined && settings.sentinels === undefined) problems.push('name: only applies with sentinels');
  return problems;
}

/** The settings' schema: unknown or bad fields are refused by name, in the gateway's configuration format. */
const SETTINGS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    url: { type: 'string', pattern: '^rediss?://', default: DEFAULTS.url },
    cluster: {
      type: 'object',
      additionalProperties: false,
      required: ['nodes'],
      properties: { nodes: { type: 'array', minItems: 1, items: HOST_PORT } },
    },
    sentinels: { type: 'array', minItems: 1, items: HOST_PORT },
    name: { type: 'string', minLength: 1 },
    prefix: { type: 'string', default: DEFAULTS.prefix },
    whenUnavailable: { enum: ['refuse', 'allowance'], default: DEFAULTS.whenUnavailable },
    localAllowance: { type: 'integer', minimum: 0, default: DEFAULTS.localAllowance },
    commandTimeoutMs: { type: 'integer', minimum: 1, default: DEFAULTS.commandTimeoutMs },
    connectTimeoutMs: { type: 'integer', minimum: 1, default: DEFAULTS.connectTimeoutMs },
    startTimeoutMs: { type: 'integer', minimum: 1, default: DEFAULTS.startTimeoutMs },
    keyCacheMs: { type: 'integer', minimum: 0, default: DEFAULTS.keyCacheMs },
    usageFlushMs: { type: 'integer', minimum: 1, default: DEFAULTS.usageFlushMs },
    retainDays: { type: 'integer', minimum: 1, default: DEFAULTS.retainDays },
    idempotencyWindowMs: { type: 'integer', minimum: 1000, default: DEFAULTS.idempotencyWindowMs },
    maxPendingWrites: { type: 'integer', minimum: 1, default: DEFAULTS.maxPendingWrites },
    replicaAcks: { type: 'integer', minimum: 0, default: DEFAULTS.replicaAcks },
  },
} as const;

/**
 * Checks settings from code or config (`where` names them in errors) and applies defaults; later sources
 * win over earlier ones.
 *
 * @throws ConfigError naming each offending field.
 */
export function resolveRedisSettings(sources: ReadonlyArray<object | undefined>, where = `plugins.${LEDGER_REDIS_PLUGIN}`): ResolvedRedisSettings {
  return validateSettings<ResolvedRedisSettings>(SETTINGS_SCHEMA, sources, where, topologyProblems);
}

/** A node's address. */
export interface HostPort {
  /** Host name or address (an IPv6 one without brackets). */
  readonly host: string;
  /** Port. */
  readonly port: number;
}

/** Parses `host:port` (see the schema's pattern); an IPv6 host loses its brackets. */
export function hostPort(value: string): HostPort {
  const at = value.lastIndexOf(':');
  const host = value.slice(0, at);
  return { host: host.startsWith('[') ? host.slice(1, -1) : host, port: Number(value.slice(at + 1)) };
}

/**
 * What logs and errors may show of where the store is, without credentials: `host:port` of the URL,
 * `cluster host:port,…` or `sentinel <name> via host:port,…`.
 */
export function storeAddress(settings: Pick<ResolvedRedisSettings, 'url' | 'cluster' | 'sentinels' | 'name'>): string {
  if (settings.cluster !== undefined) return `cluster ${settings.cluster.nodes.join(',')}`;
  if (settings.sentinels !== undefined) return `sentinel master "${settings.name ?? ''}" via ${settings.sentinels.join(',')}`;
  return redisAddress(settings.url);
}

/**
 * The store as a command tells an operator where it works, without credentials: `Redis at host:port`,
 * `Redis Cluster at host:port,…` (the seed nodes) or `Redis Sentinel master "<name>" via host:port,…`.
 */
export function storeDescription(settings: Pick<ResolvedRedisSettings, 'url' | 'cluster' | 'sentinels' | 'name'>): string {
  if (settings.cluster !== undefined) return `Redis Cluster at ${settings.cluster.nodes.join(',')}`;
  if (settings.sentinels !== undefined) return `Redis Sentinel master "${settings.name ?? ''}" via ${settings.sentinels.join(',')}`;
  return `Redis at ${redisAddress(settings.url)}`;
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
