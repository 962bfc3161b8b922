/**
 * A Node module hook (`node --import ./hide-packages.mjs`) that makes the packages named in
 * `TOLLGATE_HIDDEN_PACKAGES` (comma-separated) unresolvable, failing as Node does for a package that is
 * not installed (ERR_MODULE_NOT_FOUND, "Cannot find package '<name>'"): a test runs the command as on a
 * machine without them, from this repository's installation that has them all.
 */
import { register } from 'node:module';

const hidden = (process.env.TOLLGATE_HIDDEN_PACKAGES ?? '').split(',').filter((name) => name !== '');
if (hidden.length > 0) {
  register(
    `data:text/javascript,${encodeURIComponent(`
      const hidden = ${JSON.stringify(hidden)};
      export async function resolve(specifier, context, next) {
        const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0];
        if (hidden.includes(name)) {
          const error = new Error("Cannot find package '" + name + "' imported from " + (context.parentURL ?? 'the command'));
          error.code = 'ERR_MODULE_NOT_FOUND';
          throw error;
        }
        return next(specifier, context);
      }
    `)}`,
    import.meta.url,
  );
}
