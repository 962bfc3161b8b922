/** The plugin's name, and the key of its settings under `plugins` in the config. */
export const ADMIN_PLUGIN = 'admin';

/** The environment variable the admin token is read from when no `token` is configured. */
export const ADMIN_TOKEN_ENV = 'TOLLGATE_ADMIN_TOKEN';

/** Shortest accepted admin token. */
export const MIN_ADMIN_TOKEN_LENGTH = 16;

/** Settings of the admin API (`plugins.admin` in the config; the config wins over code). */
export interface AdminSettings {
  /** Path prefix of every admin route (default `/admin/v1`). */
  readonly prefix?: string;
  /**
   * The bearer token operators send (`Authorization: Bearer <token>`), at least 16 characters. Default:
   * the `TOLLGATE_ADMIN_TOKEN` environment variable. Without either, the admin API is off.
   */
  readonly token?: string;
  /** Largest accepted request body, in bytes (default 65536). */
  readonly maxBodyBytes?: number;
}

/** Settings with every default applied; `token` is undefined when the API is off. */
export interface ResolvedAdminSettings {
  /** See {@link AdminSettings.prefix}. */
  readonly prefix: string;
  /** See {@link AdminSettings.token}. */
  readonly token: string | undefined;
  /** See {@link AdminSettings.maxBodyBytes}. */
  readonly maxBodyBytes: number;
}

const KNOWN = new Set(['prefix', 'token', 'maxBodyBytes']);

/**
 * Checks settings from code or config and applies defaults (later sources win); the token falls back to
 * `env.TOLLGATE_ADMIN_TOKEN`.
 *
 * @throws Error naming the offending field.
 */
export function resolveAdminSettings(
  sources: ReadonlyArray<Readonly<Record<string, unknown>> | undefined>,
  env: Readonly<Record<string, string | undefined>> = process.env,
  where = `plugins.${ADMIN_PLUGIN}`,
): ResolvedAdminSettings {
  const merged: Record<string, unknown> = {};
  for (const source of sources) {
    if (source === undefined) continue;
    for (const [name, value] of Object.entries(source)) {
      if (!KNOWN.has(name)) throw new Error(`${where}.${name}: is not a known field (known: ${[...KNOWN].join(', ')})`);
      if (value !== undefined) merged[name] = value;
    }
  }
  const prefix = merged.prefix ?? '/admin/v1';
  if (typeof prefix !== 'string' || !/^\/[A-Za-z0-9._~/-]*[^/]$/.test(prefix)) throw new Error(`${where}.prefix: must be a path such as /admin/v1 (no trailing slash)`);
  const token = merged.token ?? (env[ADMIN_TOKEN_ENV] === '' ? undefined : env[ADMIN_TOKEN_ENV]);
  if (token !== undefined && (typeof token !== 'string' || token.length < MIN_ADMIN_TOKEN_LENGTH)) {
    throw new Error(`${where}.token (or ${ADMIN_TOKEN_ENV}): must be a string of at least ${MIN_ADMIN_TOKEN_LENGTH} characters`);
  }
  const maxBodyBytes = merged.maxBodyBytes ?? 65_536;
  if (typeof maxBodyBytes !== 'number' || !Number.isInteger(maxBodyBytes) || maxBodyBytes < 1024) throw new Error(`${where}.maxBodyBytes: must be an integer >= 1024`);
  return { prefix, token, maxBodyBytes };
}
