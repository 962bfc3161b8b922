import type { JsonSchema } from '../../core/plugin-api.js';
import { resolvePluginSettings } from '../cache/settings.js';

/** The plugin's name, and the key of its settings under `plugins` in the config. */
export const CACHE_REDIS_PLUGIN = 'cache-redis';

/** Settings of the Redis cache store (`plugins.cache-redis` in the config; the config wins over code). */
export interface RedisCacheSettings {
  /**
   * Redis URL, `redis://[:password@]host:port[/db]` or `rediss://` for TLS (default `redis://127.0.0.1:6379`).
   * With `cluster` or `sentinels`, only its user name, password and scheme apply, to every node.
   */
  readonly url?: string;
  /** A Redis Cluster instead of one Redis: some of its nodes (`host:port`); the others are discovered. */
  readonly cluster?: RedisCacheClusterSettings;
  /** Redis Sentinel: the sentinels (`host:port`) that name the master called {@link RedisCacheSettings.name}. */
  readonly sentinels?: readonly string[];
  /** The master's name the sentinels watch (with `sentinels`). */
  readonly name?: string;
  /** Prefix of every key, so several gateways (or environments) can share one Redis (default `tollgate:cache:`). */
  readonly prefix?: string;
  /** Values larger than this many bytes are stored gzip-compressed (default 1024). */
  readonly compressAboveBytes?: number;
  /** How long a command may take before it counts as failed (the call is then a miss), in ms (default 100). */
  readonly commandTimeoutMs?: number;
  /** How long the gateway waits for Redis at start, in ms (default 2000); it starts anyway, serving misses until Redis answers. */
  readonly connectTimeoutMs?: number;
}

/** The `cluster` section of {@link RedisCacheSettings}. */
export interface RedisCacheClusterSettings {
  /** Seed nodes, `host:port`. */
  readonly nodes: readonly string[];
}

/** Settings with every default applied. */
export type ResolvedRedisCacheSettings = Required<Omit<RedisCacheSettings, 'cluster' | 'sentinels' | 'name'>> & Pick<RedisCacheSettings, 'cluster' | 'sentinels' | 'name'>;

const HOST_PORT = { type: 'string', pattern: '^(\\[[0-9A-Fa-f:.]+\\]|[^:\\s/\\[\\]]+):[0-9]{1,5}$' } as const;

/** JSON Schema of {@link RedisCacheSettings}, with the defaults. */
export const redisCacheSettingsSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    url: { type: 'string', pattern: '^rediss?://', default: 'redis://127.0.0.1:6379' },
    cluster: { type: 'object', additionalProperties: false, required: ['nodes'], properties: { nodes: { type: 'array', minItems: 1, items: HOST_PORT } } },
    sentinels: { type: 'array', minItems: 1, items: HOST_PORT },
    name: { type: 'string', minLength: 1 },
    prefix: { type: 'string', default: 'tollgate:cache:' },
    compressAboveBytes: { type: 'integer', minimum: 0, default: 1024 },
    commandTimeoutMs: { type: 'integer', minimum: 1, default: 100 },
    connectTimeoutMs: { type: 'integer', minimum: 1, default: 2000 },
  },
};

/**
 * Checks settings from code and from the config (later sources win) and applies the defaults.
 *
 * @throws Error naming the offending field.
 */
export function resolveRedisCacheSettings(sources: ReadonlyArray<Readonly<Record<string, unknown>> | undefined>): ResolvedRedisCacheSettings {
  const settings = resolvePluginSettings<ResolvedRedisCacheSettings>(CACHE_REDIS_PLUGIN, redisCacheSettingsSchema, sources);
  if (settings.cluster !== undefined && settings.sentinels !== undefined) throw new Error(`plugins.${CACHE_REDIS_PLUGIN}.cluster: cannot be used with sentinels`);
  if ((settings.sentinels === undefined) !== (settings.name === undefined)) throw new Error(`plugins.${CACHE_REDIS_PLUGIN}.name: required with sentinels, and only with them`);
  return settings;
}
