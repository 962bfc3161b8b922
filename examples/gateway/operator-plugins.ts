import type { GatewayConfig, GatewayConfigInput, TollgatePlugin } from 'tollgate';
import { MissingPeerError } from 'tollgate';
import { LEDGER_REDIS, LEDGER_SQLITE, storeKind } from './store-flags.js';
import { docsPath } from './docs-path.js';
import { redisStoreSettings } from './store-target.js';
import { admin, ADMIN_PLUGIN, ADMIN_TOKEN_ENV, type AdminPlugin } from 'tollgate/plugins/admin';
import { accessLog, metrics, METRICS_PLUGIN } from 'tollgate/plugins/metrics';
import { health } from 'tollgate/plugins/health';

// The cache plugins' names (CACHE_PLUGIN, CACHE_REDIS_PLUGIN), spelled out: those plugins, like the
// stores, are imported only when the config uses them, since each needs a driver of its own.
const CACHE = 'cache';
const CACHE_REDIS = 'cache-redis';
// The payments plugin (PAYMENTS_PLUGIN), loaded when the config has a `plugins.payments` section: it needs
// the x402 packages and viem.
const PAYMENTS = 'payments';

/**
 * The operator's plugins of the bundled gateway, placed before the transports: the store (SQLite by
 * default, so balances, keys and usage survive restarts; Redis when the config sets
 * `plugins.ledger-redis`, for several instances), the admin API (on when an admin token is set), the
 * Prometheus endpoint, the access log and the health probes (`/healthz`, `/readyz`); the response cache when the config has a `plugins.cache`
 * section (its store in Redis when it also has `plugins.cache-redis`); x402 payments when it has a
 * `plugins.payments` section (after the store, whose ledger they credit and whose registry keeps wallets' keys).
 */
export async function operatorPlugins(config: GatewayConfigInput | GatewayConfig): Promise<TollgatePlugin[]> {
  const { plugins, missing, failures } = await loadOperatorPlugins(config);
  // Every missing driver at once, so that one install command covers them all.
  if (missing.length > 0) throw new AggregateError(failures, 'missing drivers');
  return plugins;
}

/** What {@link loadOperatorPlugins} could load. */
export interface LoadedOperatorPlugins {
  /** The operator's plugins whose drivers are installed. */
  readonly plugins: TollgatePlugin[];
  /** The driver packages missing for the others. */
  readonly missing: readonly string[];
  /** The names of the plugins that could not load (their settings sections). */
  readonly unloaded: readonly string[];
  /** Why each could not load (a {@link MissingPeerError} each). */
  readonly failures: readonly MissingPeerError[];
}

/**
 * The plugins of {@link operatorPlugins} whose drivers this installation has, and the missing ones; a
 * failure other than a missing driver is thrown.
 */
export async function loadOperatorPlugins(config: GatewayConfigInput | GatewayConfig): Promise<LoadedOperatorPlugins> {
  const cached = config.plugins?.[CACHE] !== undefined;
  const storeName = storeKind(config) === 'redis' ? LEDGER_REDIS : LEDGER_SQLITE;
  const [store, cacheStore, cache, payments] = await Promise.allSettled([
    storeName === LEDGER_REDIS ? import('tollgate/plugins/ledger-redis').then((m) => m.ledgerRedis()) : import('tollgate/plugins/ledger-sqlite').then((m) => m.ledgerSqlite()),
    cached && config.plugins?.[CACHE_REDIS] !== undefined ? import('tollgate/plugins/cache-redis').then((m) => m.cacheRedis()) : Promise.resolve(undefined),
    cached ? import('tollgate/plugins/cache').then((m) => m.responseCache()) : Promise.resolve(undefined),
    config.plugins?.[PAYMENTS] !== undefined ? import('tollgate/plugins/payments').then((m) => m.payments()) : Promise.resolve(undefined),
  ]);
  const failures: MissingPeerError[] = [];
  const unloaded: string[] = [];
  for (const [outcome, name] of [[store, storeName], [cacheStore, CACHE_REDIS], [cache, CACHE], [payments, PAYMENTS]] as const) {
    if (outcome.status === 'fulfilled') continue;
    if (!(outcome.reason instanceof MissingPeerError)) throw outcome.reason;
    failures.push(outcome.reason);
    unloaded.push(name);
  }
  const value = <T>(outcome: PromiseSettledResult<T>): T | undefined => (outcome.status === 'fulfilled' ? outcome.value : undefined);
  return {
    plugins: [value(store), admin(), metrics(), accessLog(), health(), value(cacheStore), value(cache), value(payments)].filter((p): p is TollgatePlugin => p !== undefined),
    missing: failures.map((e) => e.packageName),
    unloaded,
    failures,
  };
}

/** Banner lines about the operator's plugins: where state is kept, the admin API and metrics. */
export async function operatorBanner(config: GatewayConfig, plugins: readonly TollgatePlugin[], origin: string): Promise<string[]> {
  const lines: string[] = [];
  if (storeKind(config) === 'redis') {
    const { storeDescription } = await import('tollgate/plugins/ledger-redis');
    lines.push(`  Store:     ${storeDescription(redisStoreSettings(config))} (keys, balances and usage shared by every instance)`);
  } else {
    const { DEFAULT_SQLITE_PATH } = await import('tollgate/plugins/ledger-sqlite');
    const path = String(config.plugins[LEDGER_SQLITE]?.path ?? DEFAULT_SQLITE_PATH);
    lines.push(`  Store:     SQLite ${path === ':memory:' ? '(in memory)' : path} (keys, balances and usage survive restarts)`);
  }
  const adminPlugin = plugins.find((p): p is AdminPlugin => p.name === ADMIN_PLUGIN);
  if (adminPlugin?.settings?.token !== undefined) {
    lines.push(`  Admin API: ${origin}${adminPlugin.settings.prefix}   (Authorization: Bearer <admin token>)`);
    if (adminPlugin.settings.dashboard !== false) lines.push(`  Dashboard: ${origin}${adminPlugin.settings.dashboard}/   (sign in with the admin token)`);
  }
  else if (adminPlugin !== undefined) lines.push(`  Admin API: off (set ${ADMIN_TOKEN_ENV} to turn it on)`);
  if (plugins.some((p) => p.name === METRICS_PLUGIN)) lines.push(`  Metrics:   ${origin}/metrics`);
  if (plugins.some((p) => p.name === CACHE)) {
    lines.push(`  Cache:     ${plugins.some((p) => p.name === CACHE_REDIS) ? 'Redis, shared by every instance' : 'in memory'} (${docsPath('caching.md')})`);
  }
  return lines;
}
