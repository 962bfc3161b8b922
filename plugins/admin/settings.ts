import { validateSettings } from '../../core/plugin-api.js';

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
   * The bearer token operators send (`Authorization: Bearer <token>`), at least 16 characters, not
   * beginning with `change-me` (the deployment kit's placeholders). Default:
   * the `TOLLGATE_ADMIN_TOKEN` environment variable. Without either, the admin API is off.
   */
  readonly token?: string;
  /** Largest accepted request body, in bytes (default 65536). */
  readonly maxBodyBytes?: number;
  /** Where the dashboard is served (default `/admin`, so `GET /admin/`); `false` turns it off. It is on only with the API. */
  readonly dashboard?: string | false;
}

/** Settings with every default applied; `token` is undefined when the API is off. */
export interface ResolvedAdminSettings {
  /** See {@link AdminSettings.prefix}. */
  readonly prefix: string;
  /** See {@link AdminSettings.token}. */
  readonly token: string | undefined;
  /** See {@link AdminSettings.maxBodyBytes}. */
  readonly maxBodyBytes: number;
  /** See {@link AdminSettings.dashboard}. */
  readonly dashboard: string | false;
}

const PATH = '^/[A-Za-z0-9._~/-]*[^/]$';

/** The settings' schema: unknown or bad fields are refused by name, in the gateway's configuration format. */
const SETTINGS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    prefix: { type: 'string', pattern: PATH, default: '/admin/v1' },
    // The deployment kit's Secret ships placeholders: one left in place must not become the real token.
    token: {
      type: 'string',
      minLength: MIN_ADMIN_TOKEN_LENGTH,
      not: { pattern: '^change-?me' },
      problem: { not: `is a placeholder (it begins with "change-me"): set ${ADMIN_TOKEN_ENV} or plugins.${ADMIN_PLUGIN}.token to a secret of your own` },
    },
    maxBodyBytes: { type: 'integer', minimum: 1024, default: 65_536 },
    dashboard: { anyOf: [{ type: 'string', pattern: PATH }, { const: false }], default: '/admin' },
  },
} as const;

/**
 * Checks settings from code or config and applies defaults (later sources win); the token falls back to
 * `env.TOLLGATE_ADMIN_TOKEN`, checked as a configured one.
 *
 * @throws ConfigError naming each offending field.
 */
export function resolveAdminSettings(
  sources: ReadonlyArray<object | undefined>,
  env: Readonly<Record<string, string | undefined>> = process.env,
  where = `plugins.${ADMIN_PLUGIN}`,
): ResolvedAdminSettings {
  const fromEnv = { token: env[ADMIN_TOKEN_ENV] === '' ? undefined : env[ADMIN_TOKEN_ENV] };
  const { prefix, token, maxBodyBytes, dashboard } = validateSettings<ResolvedAdminSettings>(SETTINGS_SCHEMA, [fromEnv, ...sources], where);
  return { prefix, token, maxBodyBytes, dashboard };
}
