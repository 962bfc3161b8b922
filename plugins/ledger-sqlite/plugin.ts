import { instanceCachingFactory, KeyRegistryToken, LayeredKeyStore, PlanRegistryToken } from '../../core/store-api.js';
import { PluginError, Tokens, type InjectionToken, type TollgatePlugin } from '../../core/plugin-api.js';
import type { SqliteDatabase } from './database.js';
import { LEDGER_SQLITE_PLUGIN, resolveSqliteSettings, type SqliteLedgerSettings } from './settings.js';
import { openSqliteStore, type SqliteStore } from './sqlite-store.js';
import { SqliteFilterStore } from './sqlite-filter-store.js';
import { SqlitePinStore } from './sqlite-pin-store.js';
import { SqliteDedupMarks } from './sqlite-dedup-marks.js';

/**
 * The container token of the open store's connection, for plugins that keep tables of their own in the
 * store's file (the payments plugin's journal). `Symbol.for`, so they find it without importing this plugin.
 */
export const SqliteDatabaseToken = Symbol.for('tollgate.ledger-sqlite.Database') as InjectionToken<SqliteDatabase>;

/** The SQLite store plugin, with access to its store once registered. */
export interface SqliteLedgerPlugin extends TollgatePlugin {
  /**
   * The open store.
   *
   * @throws Error before the plugin's gateway started it.
   */
  readonly store: SqliteStore;
}

/**
 * The SQLite store: keys, plans, daily balances and usage in one file, for a single gateway instance that
 * keeps its state across restarts. It registers the `Tokens.CreditLedger`, the
 * `Tokens.UsageRecorder`, the `Tokens.FilterStore`, the `Tokens.PinStore`, the `Tokens.DedupMarks`, the {@link KeyRegistryToken}, the {@link PlanRegistryToken} and a `Tokens.KeyStore` that looks a key
 * up in the config's keys first and then in the database. Throughput buckets stay in memory (they
 * describe the last second, which a restart need not keep).
 *
 * @example
 * ```ts
 * const gateway = await createGateway({
 *   config: { ...config, plugins: { 'ledger-sqlite': { path: '/var/lib/tollgate/tollgate.db' } } },
 *   plugins: [ledgerSqlite(), httpTransport(), evmFamily()],
 * });
 * ```
 */
export function ledgerSqlite(options: SqliteLedgerSettings = {}): SqliteLedgerPlugin {
  let settings: ReturnType<typeof resolveSqliteSettings> | undefined;
  let store: SqliteStore | undefined;
  const opened = (): SqliteStore => {
    if (store === undefined) throw new Error('the ledger-sqlite plugin is not started in a gateway yet');
    return store;
  };
  return {
    name: LEDGER_SQLITE_PLUGIN,
    get store(): SqliteStore {
      return opened();
    },
    // Bindings only: the database opens in start(), and the gateway resolves these after it.
    register(container, config) {
      settings = resolveSqliteSettings([options, config.plugins[LEDGER_SQLITE_PLUGIN]]);
      const configKeys = container.resolve(Tokens.KeyStore);
      container.register(Tokens.KeyStore, { useFactory: instanceCachingFactory(() => new LayeredKeyStore(configKeys, opened().keys)) });
      container.register(KeyRegistryToken, { useFactory: () => opened().keys });
      container.register(PlanRegistryToken, { useFactory: () => opened().plans });
      container.register(Tokens.CreditLedger, { useFactory: () => opened().ledger });
      container.register(Tokens.UsageRecorder, { useFactory: () => opened().usage });
      container.register(Tokens.FilterStore, { useFactory: instanceCachingFactory(() => new SqliteFilterStore(opened().db)) });
      container.register(Tokens.PinStore, { useFactory: instanceCachingFactory(() => new SqlitePinStore(opened().db)) });
      container.register(Tokens.DedupMarks, { useFactory: instanceCachingFactory(() => new SqliteDedupMarks(opened().db)) });
      container.register(SqliteDatabaseToken, { useFactory: () => opened().db });
    },
    async start() {
      try {
        store = openSqliteStore(settings);
      } catch (error) {
        throw new PluginError(`${LEDGER_SQLITE_PLUGIN}: ${(error as Error).message}`, { code: 'PLUGIN_START_FAILED', plugin: LEDGER_SQLITE_PLUGIN, cause: error });
      }
    },
    async stop() {
      store?.close();
    },
  };
}
