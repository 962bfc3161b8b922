import { KeyRegistryToken, LayeredKeyStore, PluginError, Tokens, type TollgatePlugin } from '../../core/index.js';
import { LEDGER_SQLITE_PLUGIN, resolveSqliteSettings, type SqliteLedgerSettings } from './settings.js';
import { openSqliteStore, type SqliteStore } from './sqlite-store.js';

/** The SQLite store plugin, with access to its store once registered. */
export interface SqliteLedgerPlugin extends TollgatePlugin {
  /**
   * The open store.
   *
   * @throws Error before the plugin was registered in a gateway.
   */
  readonly store: SqliteStore;
}

/**
 * The SQLite store: keys, daily balances and usage in one file, for a single gateway instance that
 * keeps its state across restarts. It registers the `Tokens.CreditLedger`, the
 * `Tokens.UsageRecorder`, the {@link KeyRegistryToken} and a `Tokens.KeyStore` that looks a key
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
  let store: SqliteStore | undefined;
  return {
    name: LEDGER_SQLITE_PLUGIN,
    get store(): SqliteStore {
      if (store === undefined) throw new Error('the ledger-sqlite plugin is not registered in a gateway yet');
      return store;
    },
    register(container, config) {
      try {
        store = openSqliteStore(resolveSqliteSettings([options as Record<string, unknown>, config.plugins[LEDGER_SQLITE_PLUGIN]]));
      } catch (error) {
        throw new PluginError(`${LEDGER_SQLITE_PLUGIN}: ${(error as Error).message}`);
      }
      const configKeys = container.resolve(Tokens.KeyStore);
      container.register(Tokens.KeyStore, { useValue: new LayeredKeyStore(configKeys, store.keys) });
      container.register(KeyRegistryToken, { useValue: store.keys });
      container.register(Tokens.CreditLedger, { useValue: store.ledger });
      container.register(Tokens.UsageRecorder, { useValue: store.usage });
    },
    async stop() {
      store?.close();
    },
  };
}
