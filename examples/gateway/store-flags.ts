import { join } from 'node:path';
import type { GatewayConfig, GatewayConfigInput } from 'tollgate';

// The store plugins' names (LEDGER_SQLITE_PLUGIN, LEDGER_REDIS_PLUGIN): spelled out here because importing
// those plugins loads their drivers, and `config check` and `--help` must work without them.
/** The SQLite store plugin's name. */
export const LEDGER_SQLITE = 'ledger-sqlite';
/** The Redis store plugin's name. */
export const LEDGER_REDIS = 'ledger-redis';

/** The environment variable naming the folder of the SQLite store (default `.data`). */
export const DATA_DIR_ENV = 'TOLLGATE_DATA_DIR';
/** The environment variable that switches the store to Redis, holding its URL. */
export const REDIS_URL_ENV = 'TOLLGATE_REDIS_URL';
/** The environment variable that switches the store to a Redis Cluster, holding some of its nodes (`host:port,host:port,…`). */
export const REDIS_CLUSTER_ENV = 'TOLLGATE_REDIS_CLUSTER';
/** The SQLite file's name inside the data folder. */
export const DATABASE_FILE = 'tollgate.db';

/** Which store a config selects: Redis when `plugins.ledger-redis` is set, SQLite otherwise. */
export function storeKind(config: GatewayConfigInput | GatewayConfig): 'redis' | 'sqlite' {
  return config.plugins?.[LEDGER_REDIS] !== undefined ? 'redis' : 'sqlite';
}

/**
 * Applies `--data-dir` / `TOLLGATE_DATA_DIR` (the SQLite file becomes `<dir>/tollgate.db`),
 * `--redis` / `TOLLGATE_REDIS_URL` (the store becomes Redis at that URL) and `--redis-cluster` /
 * `TOLLGATE_REDIS_CLUSTER` (the store becomes the Redis Cluster with those nodes) to a resolved config.
 * Flags win over the environment, which wins over the file. A URL given with a cluster keeps only its
 * user, password and scheme, for every node.
 *
 * @throws Error when a cluster flag names no node.
 */
export function applyStoreFlags(
  config: GatewayConfig,
  flags: { dataDir?: string | undefined; redis?: string | undefined; redisCluster?: string | undefined },
  env: Readonly<Record<string, string | undefined>> = process.env,
): void {
  const dataDir = flags.dataDir ?? (env[DATA_DIR_ENV] || undefined);
  if (dataDir !== undefined) config.plugins[LEDGER_SQLITE] = { ...config.plugins[LEDGER_SQLITE], path: join(dataDir, DATABASE_FILE) };
  const redis = flags.redis ?? (env[REDIS_URL_ENV] || undefined);
  if (redis !== undefined) config.plugins[LEDGER_REDIS] = { ...config.plugins[LEDGER_REDIS], url: redis };
  const cluster = flags.redisCluster ?? (env[REDIS_CLUSTER_ENV] || undefined);
  if (cluster !== undefined) {
    const nodes = cluster.split(',').map((node) => node.trim()).filter((node) => node !== '');
    if (nodes.length === 0) throw new Error(`--redis-cluster (${REDIS_CLUSTER_ENV}): name at least one node, host:port,host:port,...`);
    // A cluster replaces a Sentinel setup the file may name; the node list itself is checked by the plugin's schema.
    const { sentinels: _sentinels, name: _name, ...rest } = (config.plugins[LEDGER_REDIS] ?? {}) as Record<string, unknown>;
    config.plugins[LEDGER_REDIS] = { ...rest, cluster: { nodes } };
  }
}
