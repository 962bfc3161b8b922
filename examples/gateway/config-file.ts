import type { CliOptions } from './cli.js';

/**
 * The environment variable naming the gateway's configuration file when `--config` is not given. `start`,
 * `config check`, `keys` and `usage` all read it, so that a deployment which sets it once has every
 * command work on the same gateway.
 */
export const CONFIG_ENV = 'TOLLGATE_CONFIG';

/** The configuration file a command works with: `--config`, else `TOLLGATE_CONFIG`, else none. */
export function configFileOf(cli: Pick<CliOptions, 'config'>, env: Readonly<Record<string, string | undefined>>): string | undefined {
  return cli.config ?? (env[CONFIG_ENV] || undefined);
}
