import { validateSettings } from '../../core/plugin-api.js';
import { IPFS_COMMANDS } from './commands.js';
import { PSA_METHOD_NAMES } from './pinning-service/methods.js';

/** The plugin's name, and the key of its settings under `plugins` in the config. */
export const IPFS_PLUGIN = 'ipfs';

/** Request-rate limits of the file-storage API for the keys of one plan (token buckets per key). */
export interface IpfsPlanLimits {
  /** Sustained read requests (every command that is not a write) per second. */
  readonly readsPerSecond: number;
  /** Sustained write requests (`add`, `block/put`, `dag/put`, `dag/import`) per second. */
  readonly writesPerSecond: number;
  /** Read requests a key may make at once after a pause (default: one second's worth, at least 1). */
  readonly readBurst?: number;
  /** Write requests a key may make at once after a pause (default: one second's worth, at least 1). */
  readonly writeBurst?: number;
  /**
   * Bytes a key may keep pinned in all (the sum of its pins' DAG sizes): an `add` or `pin/add` that would
   * pass it is refused with `STORAGE_LIMIT_REACHED` (default: no limit).
   */
  readonly storageBytes?: number;
}

/** {@link IpfsPlanLimits} with bursts resolved; `storageBytes` stays absent when the plan sets none. */
export type ResolvedIpfsPlanLimits = Required<Omit<IpfsPlanLimits, 'storageBytes'>> & Pick<IpfsPlanLimits, 'storageBytes'>;

/** Settings of the file-storage API, from `ipfs({...})` and the config's `plugins.ipfs` (which wins). */
export interface IpfsSettings {
  /**
   * Which plans include the file-storage API, and their limits, merged over `DEFAULT_IPFS_PLANS`:
   * `false` takes the API away from a plan; a plan in neither gets HTTP 403.
   */
  readonly plans?: Readonly<Record<string, IpfsPlanLimits | false>>;
  /** How long an upload (`add`, `block/put`, `dag/put`, `dag/import`) may take until the upstream answers, ms (default 600000: large uploads). */
  readonly addTimeoutMs?: number;
  /** The largest upload body of one request, bytes (default 1073741824, 1 GiB): a longer one is cut and refused with 413. */
  readonly maxUploadBytes?: number;
  /**
   * The most blocks one upload may store (default 100000): the parts of a `block/put` or `dag/put`, the
   * CAR sections of a `dag/import`, counted as the body streams; past it the upload is cut and refused
   * with 413. (`add` is bounded by `maxUploadBytes`: it stores at most one block per 256 KiB and file.)
   */
  readonly maxBlocksPerUpload?: number;
  /** Credits per call by command name, over the defaults (`version` 10, `dag/get` and `dag/resolve` 20, `get`, `block/put` and `dag/put` 40, `dag/import` 80, the rest 0), and by Pinning Service API operation (`psa/create` and `psa/replace` 10, `psa/delete` 2, `psa/list` and `psa/get` 1). */
  readonly credits?: Readonly<Record<string, number>>;
  /** How long a verified key secret is remembered, ms, so scrypt runs once per client rather than per request (default 60000; 0: never). */
  readonly secretCacheMs?: number;
  /** Failed secret checks a key may cause per second before it gets HTTP 429 (default 5): scrypt is expensive on purpose. */
  readonly secretFailuresPerSecond?: number;
  /**
   * Secret checks that need scrypt (a secret not remembered, or a refused key's decoy check) one source
   * address may cause per second before it gets HTTP 429, whatever the key (default 2).
   */
  readonly secretChecksPerSourcePerSecond?: number;
  /** Secret checks that need scrypt this process runs per second over all sources before HTTP 429 (default 4). */
  readonly secretChecksPerSecond?: number;
  /** Secret checks that may wait for (or run on) the checker thread at once; more get HTTP 429 (default 16). */
  readonly secretCheckQueue?: number;
  /** `Access-Control-Allow-Origin` for browsers (default `*`: credentials, not origins, guard access); `false` for none. */
  readonly corsOrigin?: string | false;
  /** The realm of the `WWW-Authenticate` challenge (default `tollgate`). */
  readonly realm?: string;
  /** How long `gateway.close()` waits for requests in flight (uploads, streams) to finish, ms (default 5000). */
  readonly drainTimeoutMs?: number;
  /** The Pinning Service API (`{network base}/pins`). */
  readonly pinningService?: PinningServiceSettings;
}

/** Settings of the Pinning Service API. */
export interface PinningServiceSettings {
  /**
   * How long the node may take to pin a request's content (fetch and walk the whole DAG) before the pin
   * is `failed`, ms (default 25000: within the network's `failover.deadlineMs`, 30 s by default, which
   * bounds every node request; raise both for large DAGs fetched from the network).
   */
  readonly pinTimeoutMs?: number;
  /**
   * The multiaddrs (each ending in `/p2p/<peer id>`) of the nodes behind the gateway that clients may
   * connect to, to hand content over directly: every `PinStatus`'s `delegates` (default none).
   */
  readonly delegates?: readonly string[];
}

/** {@link IpfsSettings} with every default applied. */
export interface ResolvedIpfsSettings {
  /** Plans that include the API, with their limits (bursts resolved). */
  readonly plans: ReadonlyMap<string, ResolvedIpfsPlanLimits>;
  /** See {@link IpfsSettings.addTimeoutMs}. */
  readonly addTimeoutMs: number;
  /** See {@link IpfsSettings.maxUploadBytes}. */
  readonly maxUploadBytes: number;
  /** See {@link IpfsSettings.credits} (only the overrides). */
  readonly credits: Readonly<Record<string, number>>;
  /** See {@link IpfsSettings.maxBlocksPerUpload}. */
  readonly maxBlocksPerUpload: number;
  /** See {@link IpfsSettings.secretCacheMs}. */
  readonly secretCacheMs: number;
  /** See {@link IpfsSettings.secretFailuresPerSecond}. */
  readonly secretFailuresPerSecond: number;
  /** See {@link IpfsSettings.secretChecksPerSourcePerSecond}. */
  readonly secretChecksPerSourcePerSecond: number;
  /** See {@link IpfsSettings.secretChecksPerSecond}. */
  readonly secretChecksPerSecond: number;
  /** See {@link IpfsSettings.secretCheckQueue}. */
  readonly secretCheckQueue: number;
  /** See {@link IpfsSettings.corsOrigin}. */
  readonly corsOrigin: string | false;
  /** See {@link IpfsSettings.realm}. */
  readonly realm: string;
  /** See {@link IpfsSettings.drainTimeoutMs}. */
  readonly drainTimeoutMs: number;
  /** See {@link IpfsSettings.pinningService}. */
  readonly pinningService: Required<PinningServiceSettings>;
}

/** The file-storage API's limits of the default plans (requests per second per key). */
export const DEFAULT_IPFS_PLANS: Readonly<Record<string, IpfsPlanLimits>> = Object.freeze({
  core: { readsPerSecond: 10, writesPerSecond: 2 },
  developer: { readsPerSecond: 25, writesPerSecond: 5 },
  team: { readsPerSecond: 50, writesPerSecond: 10 },
  growth: { readsPerSecond: 100, writesPerSecond: 20 },
  custom: { readsPerSecond: 250, writesPerSecond: 50 },
});

const rate = { type: 'number', exclusiveMinimum: 0 } as const;
const burst = { type: 'number', minimum: 1 } as const;

/** One settings object (`ipfs({...})` or the config's `plugins.ipfs`); unknown fields are refused. */
const LAYER_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    plans: {
      type: 'object',
      additionalProperties: {
        anyOf: [
          { const: false },
          {
            type: 'object',
            additionalProperties: false,
            required: ['readsPerSecond', 'writesPerSecond'],
            properties: { readsPerSecond: rate, writesPerSecond: rate, readBurst: burst, writeBurst: burst, storageBytes: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER } },
          },
        ],
      },
    },
    addTimeoutMs: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
    maxUploadBytes: { type: 'integer', minimum: 1024, maximum: Number.MAX_SAFE_INTEGER },
    maxBlocksPerUpload: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
    credits: { type: 'object', propertyNames: { enum: [...IPFS_COMMANDS.map((c) => c.name), ...PSA_METHOD_NAMES] }, additionalProperties: { type: 'integer', minimum: 0, maximum: 1_000_000_000 } },
    drainTimeoutMs: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
    secretCacheMs: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
    secretFailuresPerSecond: rate,
    secretChecksPerSourcePerSecond: rate,
    secretChecksPerSecond: rate,
    secretCheckQueue: { type: 'integer', minimum: 1, maximum: 100_000 },
    corsOrigin: { anyOf: [{ type: 'string' }, { const: false }] },
    realm: { type: 'string', pattern: '^[\\x20\\x21\\x23-\\x7e]*$' },
    pinningService: {
      type: 'object',
      additionalProperties: false,
      properties: {
        pinTimeoutMs: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
        delegates: { type: 'array', items: { type: 'string', pattern: '^/.+/p2p/[^/]+$' }, uniqueItems: true, maxItems: 20 },
      },
    },
  },
} as const;

/** Checks one settings object (`ipfs({...})` or the config's `plugins.ipfs`) through core's validator; throws a `ConfigError` naming every problem. */
export function readIpfsSettings(where: string, source: object | undefined): IpfsSettings {
  if (source === undefined) return {};
  return validateSettings<IpfsSettings>(LAYER_SCHEMA, [source], where);
}

/** Merges settings layers (later ones win; plans merge by name over the defaults) and applies defaults. */
export function resolveIpfsSettings(layers: readonly IpfsSettings[]): ResolvedIpfsSettings {
  const merged = Object.assign({}, ...layers) as IpfsSettings;
  const plans = new Map<string, ResolvedIpfsPlanLimits>();
  const table: Record<string, IpfsPlanLimits | false> = { ...DEFAULT_IPFS_PLANS };
  for (const layer of layers) Object.assign(table, layer.plans);
  for (const [name, limits] of Object.entries(table)) {
    if (limits === false) continue;
    plans.set(name, {
      readsPerSecond: limits.readsPerSecond,
      writesPerSecond: limits.writesPerSecond,
      readBurst: limits.readBurst ?? Math.max(1, limits.readsPerSecond),
      writeBurst: limits.writeBurst ?? Math.max(1, limits.writesPerSecond),
      ...(limits.storageBytes === undefined ? {} : { storageBytes: limits.storageBytes }),
    });
  }
  return {
    plans,
    addTimeoutMs: merged.addTimeoutMs ?? 600_000,
    maxUploadBytes: merged.maxUploadBytes ?? 1024 * 1024 * 1024,
    maxBlocksPerUpload: merged.maxBlocksPerUpload ?? 100_000,
    credits: Object.assign({}, ...layers.map((layer) => layer.credits)) as Record<string, number>,
    secretCacheMs: merged.secretCacheMs ?? 60_000,
    secretFailuresPerSecond: merged.secretFailuresPerSecond ?? 5,
    secretChecksPerSourcePerSecond: merged.secretChecksPerSourcePerSecond ?? 2,
    secretChecksPerSecond: merged.secretChecksPerSecond ?? 4,
    secretCheckQueue: merged.secretCheckQueue ?? 16,
    corsOrigin: merged.corsOrigin ?? '*',
    realm: merged.realm ?? 'tollgate',
    drainTimeoutMs: merged.drainTimeoutMs ?? 5_000,
    pinningService: {
      pinTimeoutMs: merged.pinningService?.pinTimeoutMs ?? 25_000,
      delegates: merged.pinningService?.delegates ?? [],
    },
  };
}
