import { importPeer } from '../../core/plugin-api.js';

// This plugin's drivers are optional peer dependencies of tollgate: an application installs those of the
// plugins it loads. Loading them here, with top-level await, turns a missing one into an error that names
// the package when the plugin is imported (a static import would fail at link time with Node's message).

/** `multiformats` (its CID module). */
export const multiformatsCid: typeof import('multiformats/cid') = await importPeer('multiformats', () => import('multiformats/cid'), 'tollgate/plugins/ipfs');
/** The `@ipld/dag-pb` package. */
export const dagPb: typeof import('@ipld/dag-pb') = await importPeer('@ipld/dag-pb', () => import('@ipld/dag-pb'), 'tollgate/plugins/ipfs');
