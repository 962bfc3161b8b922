import { importPeer } from '../../core/plugin-api.js';

// This plugin's drivers are optional peer dependencies of tollgate: an application installs those of the
// plugins it loads. Loading them here, with top-level await, turns a missing one into an error that names
// the package when the plugin is imported (a static import would fail at link time with Node's message).

/** The `prom-client` package. */
export const promClient: typeof import('prom-client') = await importPeer('prom-client', () => import('prom-client'), 'tollgate/plugins/metrics');
