import { createRequire } from 'node:module';

/** Tollgate's version, from its package.json (found by package name, so the same from dist/ and the sources). */
export function packageVersion(): string {
  return (createRequire(import.meta.url)('tollgate/package.json') as { version: string }).version;
}
