/**
 * A package a plugin needs that is not installed. Plugins declare their drivers (ws, better-sqlite3,
 * ioredis...) as optional peer dependencies, so an application installs only the drivers of the
 * plugins it loads; this error names the one that is missing and how to add it.
 */
export class MissingPeerError extends Error {
  /** The npm package to install (`ws`). */
  readonly packageName: string;
  /** Who needs it (`tollgate/plugins/ws`). */
  readonly neededBy: string;
  constructor(packageName: string, neededBy: string, options?: ErrorOptions) {
    super(`${neededBy} needs the package "${packageName}", which is not installed: npm install ${packageName}`, options);
    this.name = 'MissingPeerError';
    this.packageName = packageName;
    this.neededBy = neededBy;
  }
}

/** Whether `error` says that `packageName` itself (not something it imports) cannot be found. */
function isMissing(error: unknown, packageName: string): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return false;
  return String((error as Error).message).includes(`'${packageName}'`);
}

/**
 * Loads an optional peer dependency, turning "not installed" into a {@link MissingPeerError} that names
 * the package; any other failure is rethrown as it is. A plugin calls it at the top level of one small
 * module (top-level await), so importing the plugin fails at once, with that message, when the package
 * is missing: a static `import ... from 'ws'` would fail at link time with Node's own error instead.
 *
 * @example
 * ```ts
 * // plugins/ws/peers.ts
 * import { importPeer } from 'tollgate';
 * export const { WebSocketServer } = await importPeer('ws', () => import('ws'), 'tollgate/plugins/ws');
 * ```
 */
export async function importPeer<T>(packageName: string, load: () => Promise<T>, neededBy: string): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (isMissing(error, packageName)) throw new MissingPeerError(packageName, neededBy, { cause: error });
    throw error;
  }
}
