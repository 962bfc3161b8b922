import { PluginError, Tokens, type TollgatePlugin } from '../../core/index.js';
import { AdminTransport } from './admin-transport.js';
import { ADMIN_PLUGIN, ADMIN_TOKEN_ENV, resolveAdminSettings, type AdminSettings, type ResolvedAdminSettings } from './settings.js';

/** The admin plugin, telling whether its API is on. */
export interface AdminPlugin extends TollgatePlugin {
  /** The resolved settings once registered (`token` undefined: the API is off). */
  readonly settings: ResolvedAdminSettings | undefined;
}

/**
 * The admin HTTP API as a plugin: a transport answering under `prefix` (default `/admin/v1`) for anyone
 * holding the admin token (`token`, or the `TOLLGATE_ADMIN_TOKEN` environment variable). Without a token
 * the API is off and its paths are not claimed. Key operations need a store plugin that keeps keys
 * (ledger-sqlite, ledger-redis); keys of the config file are listed read-only.
 *
 * @example
 * ```ts
 * const gateway = await createGateway({
 *   config: { ...config, plugins: { admin: { token: process.env.ADMIN_TOKEN } } },
 *   plugins: [ledgerSqlite(), admin(), httpTransport(), evmFamily()],
 * });
 * // curl -H "Authorization: Bearer $ADMIN_TOKEN" -d '{"plan":"growth"}' -H 'content-type: application/json' http://127.0.0.1:8545/admin/v1/keys
 * ```
 */
export function admin(options: AdminSettings = {}): AdminPlugin {
  let settings: ResolvedAdminSettings | undefined;
  return {
    name: ADMIN_PLUGIN,
    get settings() {
      return settings;
    },
    register(container, config) {
      try {
        settings = resolveAdminSettings([options as Record<string, unknown>, config.plugins[ADMIN_PLUGIN]]);
      } catch (error) {
        throw new PluginError((error as Error).message);
      }
      const { token } = settings;
      if (token !== undefined) container.register(Tokens.Transport, { useValue: new AdminTransport({ ...settings, token }) });
    },
    async start(gateway) {
      if (settings?.token === undefined) gateway.logger.info(`admin API off: set ${ADMIN_TOKEN_ENV} or plugins.admin.token to turn it on`);
      else gateway.logger.info({ prefix: settings.prefix }, 'admin API on');
    },
  };
}
