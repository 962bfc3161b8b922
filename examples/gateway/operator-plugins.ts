import { join } from 'node:path';
import type { GatewayConfig, GatewayConfigInput, TollgatePlugin } from 'tollgate';
import { ledgerSqlite, LEDGER_SQLITE_PLUGIN, DEFAULT_SQLITE_PATH } from 'tollgate/plugins/ledger-sqlite';
import { ledgerRedis, redisAddress, LEDGER_REDIS_PLUGIN } from 'tollgate/plugins/ledger-redis';
import { admin, ADMIN_PLUGIN, ADMIN_TOKEN_ENV, type AdminPlugin } from 'tollgate/plugins/admin';
import { accessLog, metrics, METRICS_PLUGIN } from 'tollgate/plugins/metrics';

/** The environment variable naming the folder of the SQLite store (default `.data`). */
export const DATA_DIR_ENV = 'TOLLGATE_DATA_DIR';
/** The environment variable that switches the store to Redis, holding its URL. */
export const REDIS_URL_ENV = 'TOLLGATE_REDIS_URL';
/** The SQLite file's name inside the data folder. */
export const DATABASE_FILE = 'tollgate.db';

/** Which store a config selects: Redis when `plugins.ledger-redis` is set, SQLite otherwise. */
export function storeKind(config: GatewayConfigInput | GatewayConfig): 'redis' | 'sqlite' {
  return config.plugins?.[LEDGER_REDIS_PLUGIN] !== undefined ? 'redis' : 'sqlite';
}

/**
 * Applies `--data-dir` / `TOLLGATE_DATA_DIR` (the SQLite file becomes `<dir>/tollgate.db`) and
 * `--redis` / `TOLLGATE_REDIS_URL` (the store becomes Redis at that URL) to a resolved config. Flags win
 * over the environment, which wins over the file.
 */
export function applyStoreFlags(
  config: GatewayConfig,
  flags: { dataDir?: string | undefined; redis?: string | undefined },
  env: Readonly<Record<string, string | undefined>> = process.env,
): void {
  const dataDir = flags.dataDir ?? (env[DATA_DIR_ENV] || undefined);
  if (dataDir !== undefined) config.plugins[LEDGER_SQLITE_PLUGIN] = { ...config.plugins[LEDGER_SQLITE_PLUGIN], path: join(dataDir, DATABASE_FILE) };
  const redis = flags.redis ?? (env[REDIS_URL_ENV] || undefined);
  if (redis !== undefined) config.plugins[LEDGER_REDIS_PLUGIN] = { ...config.plugins[LEDGER_REDIS_PLUGIN], url: redis };
}

/**
 * The operator's plugins of the bundled gateway, placed before the transports: the store (SQLite by
 * default, so balances, keys and usage survive restarts; Redis when the config sets
 * `plugins.ledger-redis`, for several instances), the admin API (on when an admin token is set), the
 * Prometheus endpoint and the access log.
 */
export function operatorPlugins(config: GatewayConfigInput | GatewayConfig): TollgatePlugin[] {
  const store = storeKind(config) === 'redis' ? ledgerRedis() : ledgerSqlite();
  return [store, admin(), metrics(), accessLog()];
}

/** Banner lines about the operator's plugins: where state is kept, the admin API and metrics. */
export function operatorBanner(config: GatewayConfig, plugins: readonly TollgatePlugin[], origin: string): string[] {
  const lines: string[] = [];
  if (storeKind(config) === 'redis') {
    lines.push(`  Store:     Redis at ${redisAddress(String(config.plugins[LEDGER_REDIS_PLUGIN]?.url ?? 'redis://127.0.0.1:6379'))} (keys, balances and usage shared by every instance)`);
  } else {
    const path = String(config.plugins[LEDGER_SQLITE_PLUGIN]?.path ?? DEFAULT_SQLITE_PATH);
    lines.push(`  Store:     SQLite ${path === ':memory:' ? '(in memory)' : path} (keys, balances and usage survive restarts)`);
  }
  const adminPlugin = plugins.find((p): p is AdminPlugin => p.name === ADMIN_PLUGIN);
  if (adminPlugin?.settings?.token !== undefined) lines.push(`  Admin API: ${origin}${adminPlugin.settings.prefix}   (Authorization: Bearer <admin token>)`);
  else if (adminPlugin !== undefined) lines.push(`  Admin API: off (set ${ADMIN_TOKEN_ENV} to turn it on)`);
  if (plugins.some((p) => p.name === METRICS_PLUGIN)) lines.push(`  Metrics:   ${origin}/metrics`);
  return lines;
}
