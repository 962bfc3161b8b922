import { existsSync } from 'node:fs';
import type { GatewayConfig } from 'tollgate';
import type { CliOptions } from './cli.js';
import { CONFIG_ENV, configFileOf } from './config-file.js';
import { DATA_DIR_ENV, LEDGER_REDIS, LEDGER_SQLITE, REDIS_URL_ENV, storeKind } from './store-flags.js';

/** The demo store's SQLite file when no other is configured (the ledger-sqlite plugin's default). */
const DEFAULT_SQLITE_PATH = '.data/tollgate.db';

/**
 * Which gateway a store command (`keys`, `usage`) works for: its configuration file (`--config`, else
 * `TOLLGATE_CONFIG`, the same variable `tollgate start` reads), or the demo's with `--demo`. Never an
 * implicit choice: a command that guessed would put keys into a store no gateway serves, or issue a
 * managed key under an id the gateway's file already gives one of its keys.
 */
export type StoreTarget =
  | { readonly ok: true; readonly file: string | undefined }
  | { readonly ok: false; readonly problem: string };

/** Decides the gateway a store command works for, or why it refuses to guess (exit code 2). */
export function storeTarget(cli: CliOptions, env: Readonly<Record<string, string | undefined>>): StoreTarget {
  const file = configFileOf(cli, env);
  const name = cli.command?.name ?? 'keys';
  if (cli.demo) {
    if (file === undefined) return { ok: true, file: undefined };
    const from = cli.config !== undefined ? '--config' : `${CONFIG_ENV}=${file}`;
    return { ok: false, problem: `tollgate ${name}: --demo and ${from} name two different gateways; give one` };
  }
  if (file !== undefined) return { ok: true, file };
  const storeHints = [
    cli.redis !== undefined ? '--redis' : undefined,
    cli.dataDir !== undefined ? '--data-dir' : undefined,
    env[REDIS_URL_ENV] ? REDIS_URL_ENV : undefined,
    env[DATA_DIR_ENV] ? DATA_DIR_ENV : undefined,
  ].filter((hint) => hint !== undefined);
  const why = storeHints.length > 0
    ? `${storeHints.join(' and ')} say${storeHints.length === 1 ? 's' : ''} where the store is, not which keys the gateway's configuration file defines`
    : 'without a configuration it would work on the demo store, which a configured gateway does not use';
  return {
    ok: false,
    problem: [
      `tollgate ${name}: which gateway? ${why}.`,
      `  pass the gateway's configuration: tollgate ${name} ... --config <file>   (or set ${CONFIG_ENV}=<file>, which tollgate start reads too)`,
      `  or, for the store of tollgate demo: tollgate ${name} ... --demo`,
    ].join('\n'),
  };
}

/** The `plugins.ledger-redis` section as the Redis plugin's {@link RedisStoreDescription} takes it, its URL defaulted. */
export function redisStoreSettings(config: GatewayConfig): Parameters<RedisStoreDescription>[0] {
  const settings = (config.plugins[LEDGER_REDIS] ?? {}) as Partial<Parameters<RedisStoreDescription>[0]>;
  return { ...settings, url: String(settings.url ?? 'redis://127.0.0.1:6379') };
}

/** How the Redis plugin names a store (`storeDescription` of `tollgate/plugins/ledger-redis`, imported only when the store is Redis). */
export type RedisStoreDescription = (settings: { url: string; cluster?: { nodes: string[] } | undefined; sentinels?: string[] | undefined; name?: string | undefined }) => string;

/**
 * One line naming the store and the configuration a store command used, so that an operator sees them:
 * `store: Redis at host:port`, `Redis Cluster at host:port,…`, `Redis Sentinel master "<name>" via …` or `SQLite <path>`.
 */
export function describeTarget(config: GatewayConfig, file: string | undefined, describeRedis: RedisStoreDescription): string {
  const store = storeKind(config) === 'redis' ? describeRedis(redisStoreSettings(config)) : `SQLite ${sqlitePath(config)}`;
  return `store: ${store}; config: ${file ?? 'the demo\'s (--demo)'}`;
}

/** The SQLite file the config's store lives in. */
export function sqlitePath(config: GatewayConfig): string {
  return String(config.plugins[LEDGER_SQLITE]?.path ?? DEFAULT_SQLITE_PATH);
}

/**
 * Why a SQLite store cannot be the gateway's, or undefined: a store in memory is no one else's, and a
 * file that does not exist yet at the default place (no `--data-dir`, `TOLLGATE_DATA_DIR` or
 * `plugins.ledger-sqlite.path` chose it) is one no gateway has opened: the gateway runs elsewhere (on
 * Redis, or with another `--data-dir`), and creating it would put keys where nothing serves them.
 */
export function sqliteStoreProblem(config: GatewayConfig): string | undefined {
  if (storeKind(config) !== 'sqlite') return undefined;
  const path = sqlitePath(config);
  if (path === ':memory:') return 'the configuration keeps its store in memory (plugins.ledger-sqlite.path: ":memory:"): only the gateway itself can manage it';
  const chosen = config.plugins[LEDGER_SQLITE]?.path !== undefined;
  if (!chosen && !existsSync(path)) {
    return `no store at ${path}, the default place: no gateway has opened it. Pass the --data-dir or --redis the gateway runs with (or set the store in its configuration), or start the gateway once first`;
  }
  return undefined;
}
