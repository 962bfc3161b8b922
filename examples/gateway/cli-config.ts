import { ConfigError, loadConfigFile, resolveConfig, type GatewayConfig } from 'tollgate';
import { portFromEnv, type CliOptions } from './cli.js';
import { defaultConfig } from './default-config.js';
import { applyStoreFlags } from './store-flags.js';
import { configFileOf } from './config-file.js';

/**
 * The configuration a command works with: the `--config` file (else `TOLLGATE_CONFIG`'s), or the demo's
 * without one or with `demo` set; then the flags and environment on top (`--port`/`PORT`, `--host`,
 * `--admin-port`, `--log-level`, `--workers`, the store's `--data-dir` and `--redis`). Throws {@link ConfigError} for an
 * invalid file, another error for one that cannot be read.
 */
export async function loadCliConfig(cli: CliOptions, env: Readonly<Record<string, string | undefined>> = process.env, demo = false): Promise<GatewayConfig> {
  const file = demo ? undefined : configFileOf(cli, env);
  const config = file === undefined ? resolveConfig(defaultConfig) : await loadConfigFile(file, env);
  const port = cli.port ?? portFromEnv(env.PORT);
  if (port !== undefined) config.server.port = port;
  if (cli.host !== undefined) config.server.host = cli.host;
  if (cli.adminPort !== undefined) config.server.adminListen = { host: config.server.adminListen?.host ?? '127.0.0.1', port: cli.adminPort };
  if (cli.logLevel !== undefined) config.log.level = cli.logLevel;
  if (cli.workers !== undefined) config.server.workers = cli.workers;
  applyStoreFlags(config, cli, env);
  return config;
}

/** The text for a failed {@link loadCliConfig}: the problems of an invalid file, or why it cannot be read. */
export function reportLoadFailure(error: unknown, file: string | undefined): string {
  if (error instanceof ConfigError) return `${error.message}\n`;
  return `cannot read ${file ?? 'the configuration'}: ${(error as Error).message}\n`;
}
