import { importPeer } from '../../core/plugin-api.js';

// This plugin's drivers are optional peer dependencies of tollgate: an application installs those of the
// plugins it loads. Loading them here, with top-level await, turns a missing one into an error that names
// the package when the plugin is imported (a static import would fail at link time with Node's message).

/** The `jose` package. */
export const jose: typeof import('jose') = await importPeer('jose', () => import('jose'), 'tollgate/plugins/security');
