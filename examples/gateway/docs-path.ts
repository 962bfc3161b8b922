import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';

/**
 * Where a guide of docs/ is, as a path from the current folder: `docs/caching.md` in a clone,
 * `node_modules/tollgate/docs/caching.md` in a project that installed the package (which ships docs/).
 */
export function docsPath(page: string): string {
  const root = dirname(createRequire(import.meta.url).resolve('tollgate/package.json'));
  return relative(process.cwd(), join(root, 'docs', page));
}
