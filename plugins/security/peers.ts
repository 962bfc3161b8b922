import { importPeer } from '../../core/plugin-api.js';

// `jose` is an optional peer dependency of tollgate, needed only by keys that take JWTs: it is loaded on
// the first JWT to check (or at start when a config key has JWT settings), so that a gateway whose keys use
// none runs without it. A missing one is a MissingPeerError naming the package.

type Jose = typeof import('jose');
let jose: Promise<Jose> | undefined;

/** The `jose` package, imported once, on first use. */
export function loadJose(): Promise<Jose> {
  jose ??= importPeer('jose', () => import('jose'), 'JWT checks of API keys (tollgate/plugins/security)');
  // A failed import is not remembered, so installing the package and reloading is enough.
  jose.catch(() => (jose = undefined));
  return jose;
}
