import { Ajv2020 } from 'ajv/dist/2020.js';
import type { JsonSchema } from '../../core/plugin-api.js';

/** The plugin's name, and the key of its settings under `plugins` in the config. */
export const CACHE_PLUGIN = 'cache';

/** Settings of the response cache (`plugins.cache` in the config; the config wins over code). */
export interface CacheSettings {
  /** Networks whose calls are cached, by name (default: every network). */
  readonly networks?: readonly string[];
  /** Bound of the memory store, in bytes of keys and values (default 64 MiB); unused with another store. */
  readonly maxBytes?: number;
  /** Whether answers carry `x-tollgate-cache: hit` or `miss` (default true). */
  readonly header?: boolean;
  /** How often each network's head is read, in ms (default 1000). */
  readonly headIntervalMs?: number;
  /** Longest life of an answer bound to the head (a `latest` read), in ms, should a head move be missed (default 12000). */
  readonly headTtlMs?: number;
  /** Life of an answer about a block above the finalized height, in ms, unless a reorg drops it first (default 600000). */
  readonly unfinalizedTtlMs?: number;
  /** Life of an answer that never changes (a finalized block, the chain id), in ms (default 86400000). */
  readonly finalTtlMs?: number;
  /** A store lookup slower than this, in ms, counts as a miss (default 50). */
  readonly lookupTimeoutMs?: number;
  /** Share of the method's credits a hit costs (default 1: the same as a miss, as the hosted service charges). */
  readonly hitCreditFactor?: number;
  /** The same, per plan name, overriding `hitCreditFactor`: `{ free: 1, growth: 0.5 }`. */
  readonly planHitCreditFactor?: Readonly<Record<string, number>>;
}

/** Settings with every default applied. */
export type ResolvedCacheSettings = Required<Omit<CacheSettings, 'networks'>> & Pick<CacheSettings, 'networks'>;

const millis = (minimum: number, fallback: number, description: string): object => ({ type: 'integer', minimum, default: fallback, description });

/** JSON Schema of {@link CacheSettings}, with the defaults. */
export const cacheSettingsSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    networks: { type: 'array', items: { type: 'string', minLength: 1 }, description: 'Networks whose calls are cached (default: all).' },
    maxBytes: { type: 'integer', minimum: 1024, default: 64 * 1024 * 1024, description: 'Bound of the memory store, in bytes.' },
    header: { type: 'boolean', default: true, description: 'Whether answers carry x-tollgate-cache: hit|miss.' },
    headIntervalMs: millis(10, 1000, 'How often each network\'s head is read.'),
    headTtlMs: millis(1, 12_000, 'Longest life of an answer bound to the head.'),
    unfinalizedTtlMs: millis(1, 600_000, 'Life of an answer about an unfinalized block.'),
    finalTtlMs: millis(1, 86_400_000, 'Life of an answer that never changes.'),
    lookupTimeoutMs: millis(1, 50, 'A store lookup slower than this counts as a miss.'),
    hitCreditFactor: { type: 'number', minimum: 0, default: 1, description: 'Share of the method\'s credits a hit costs.' },
    planHitCreditFactor: { type: 'object', additionalProperties: { type: 'number', minimum: 0 }, default: {}, description: 'Share per plan name.' },
  },
};

const ajv = new Ajv2020({ useDefaults: true, allErrors: false, strict: false });

/**
 * Merges settings from code and from the config (later sources win), checks them against `schema` and
 * applies its defaults; shared by the cache's plugins.
 *
 * @throws Error naming the offending field under `plugins.<plugin>`.
 */
export function resolvePluginSettings<T>(plugin: string, schema: JsonSchema, sources: ReadonlyArray<Readonly<Record<string, unknown>> | undefined>): T {
  const validate = ajv.compile(schema);
  const merged: Record<string, unknown> = {};
  for (const source of sources) {
    for (const [name, value] of Object.entries(source ?? {})) if (value !== undefined) merged[name] = value;
  }
  if (!validate(merged)) {
    const error = validate.errors![0]!;
    const field = error.instancePath === '' ? (error.params as { additionalProperty?: string }).additionalProperty ?? '' : error.instancePath.slice(1).replaceAll('/', '.');
    throw new Error(`plugins.${plugin}${field === '' ? '' : `.${field}`}: ${error.message ?? 'is invalid'}`);
  }
  return merged as T;
}

/**
 * Checks settings from code and from the config (later sources win) and applies the defaults.
 *
 * @throws Error naming the offending field.
 */
export function resolveCacheSettings(sources: ReadonlyArray<Readonly<Record<string, unknown>> | undefined>): ResolvedCacheSettings {
  return resolvePluginSettings<ResolvedCacheSettings>(CACHE_PLUGIN, cacheSettingsSchema, sources);
}
