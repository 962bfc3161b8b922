import { importPeer } from '../../core/plugin-api.js';

// This plugin's drivers are optional peer dependencies of tollgate: an application installs those of the
// plugins it loads. Loading them here, with top-level await, turns a missing one into an error that names
// the package when the plugin is imported (a static import would fail at link time with Node's message).

/** The `lru-cache` package. */
export const lruCache: typeof import('lru-cache') = await importPeer('lru-cache', () => import('lru-cache'), 'tollgate/plugins/cache');
