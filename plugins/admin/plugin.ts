import { Tokens, type TollgatePlugin } from '../../core/plugin-api.js';
import { AdminTransport } from './admin-transport.js';
import { DashboardTransport } from './dashboard-transport.js';
import { TrafficRecorder } from './traffic-recorder.js';
import { DashboardSessions } from './dashboard-sessions.js';

/** The longest path both `a` and `b` are under (`/admin` for `/admin` and `/admin/v1`), for the session cookie. */
function commonPath(a: string, b: string): string {
  const x = a.split('/');
  const y = b.split('/');
  let i = 0;
  while (i < x.length && i < y.length && x[i] === y[i]) i++;
  return x.slice(0, i).join('/') || '/';
}
import { ADMIN_PLUGIN, ADMIN_TOKEN_ENV, resolveAdminSettings, type AdminSettings, type ResolvedAdminSettings } from './settings.js';

/** The admin plugin, telling whether its API is on. */
export interface AdminPlugin extends TollgatePlugin {
  /** The resolved settings once registered (`token` undefined: the API is off). */
  readonly settings: ResolvedAdminSettings | undefined;
}

/**
 * The admin HTTP API as a plugin: a transport answering under `prefix` (default `/admin/v1`) for anyone
 * holding the admin token (`token`, or the `TOLLGATE_ADMIN_TOKEN` environment variable), and the
 * dashboard, a page at `dashboard` (default `/admin/`) that signs in with that token and shows usage,
 * upstreams and key management through the API. Without a token
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
  let dashboard: DashboardTransport | undefined;
  return {
    name: ADMIN_PLUGIN,
    get settings() {
      return settings;
    },
    register(container, config) {
      settings = resolveAdminSettings([options, config.plugins[ADMIN_PLUGIN]]);
      const { token } = settings;
      if (token === undefined) return;
      const clock = container.resolve(Tokens.Clock);
      const traffic = new TrafficRecorder(clock);
      container.register(Tokens.CallObserver, { useValue: traffic });
      const sessions = settings.dashboard === false ? undefined : new DashboardSessions(token, () => clock.now());
      container.register(Tokens.Transport, { useValue: new AdminTransport({ ...settings, token }, { traffic, ...(sessions === undefined ? {} : { sessions }) }) });
      if (settings.dashboard !== false && sessions !== undefined) {
        const cookiePath = commonPath(settings.dashboard, settings.prefix);
        dashboard = new DashboardTransport({ path: settings.dashboard, apiPrefix: settings.prefix, sessions, cookiePath });
        container.register(Tokens.Transport, { useValue: dashboard });
      }
    },
    async start(gateway) {
      if (settings?.token === undefined) gateway.logger.info(`admin API off: set ${ADMIN_TOKEN_ENV} or plugins.admin.token to turn it on`);
      else {
        dashboard?.load();
        gateway.logger.info({ prefix: settings.prefix, dashboard: settings.dashboard }, 'admin API on');
      }
    },
  };
}
