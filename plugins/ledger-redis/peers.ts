import type { Cluster, Redis } from 'ioredis';
import { importPeer } from '../../core/plugin-api.js';

// This plugin's drivers are optional peer dependencies of tollgate: an application installs those of the
// plugins it loads. Loading them here, with top-level await, turns a missing one into an error that names
// the package when the plugin is imported (a static import would fail at link time with Node's message).

/** The `prom-client` package: the store's connection state is exported to its shared registry. */
export const promClient: typeof import('prom-client') = await importPeer('prom-client', () => import('prom-client'), 'tollgate/plugins/ledger-redis');
/** The `ioredis` package. */
export const ioredis: { readonly Redis: typeof Redis; readonly Cluster: typeof Cluster } = await importPeer('ioredis', () => import('ioredis'), 'tollgate/plugins/ledger-redis');
