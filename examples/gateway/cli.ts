import { parseArgs } from 'node:util';
import { CLI_COMMANDS } from './command-table.js';

/** The command given on the command line (`start`, `keys ...`): its name and the words after it. */
export interface CliCommand {
  /** A name from {@link CLI_COMMANDS}. */
  readonly name: string;
  /** The words after it (`create`, `list`, `rotate <id>`... for keys; `<id>` for usage; `check <file>` for config). */
  readonly args: readonly string[];
}

/** Parsed command-line options of the `tollgate` command. */
export interface CliOptions {
  /** `--config <file>`: a JSON or YAML configuration file. */
  readonly config?: string;
  /** `--port <n>`: overrides `server.port`. */
  readonly port?: number;
  /** `--host <addr>`: overrides `server.host`. */
  readonly host?: string;
  /** `--admin-port <n>`: serves the admin API, dashboard and metrics on this port only (`server.adminListen.port`). */
  readonly adminPort?: number;
  /** `--log-level <level>`: overrides `log.level`. */
  readonly logLevel?: string;
  /** `--data-dir <dir>`: the SQLite store's folder (its file is `<dir>/tollgate.db`). */
  readonly dataDir?: string;
  /** `--redis <url>`: keep keys, balances and usage in Redis instead (several instances). */
  readonly redis?: string;
  /** `--workers <n|auto>`: overrides `server.workers`. */
  readonly workers?: number | 'auto';
  /** `--redis-cluster <host:port,…>`: keep them in a Redis Cluster, named by some of its nodes. */
  readonly redisCluster?: string;
  /** The command, when one was given. */
  readonly command?: CliCommand;
  /** `--plan <name>` of `keys create`. */
  readonly plan?: string;
  /** `--id <id>` of `keys create`. */
  readonly id?: string;
  /** `--label <text>` of `keys create`. */
  readonly label?: string;
  /** `--day <YYYY-MM-DD>` of `usage` (default today), or `--from`/`--to` for a range. */
  readonly day?: string;
  /** `--from <YYYY-MM-DD>` of `usage`. */
  readonly from?: string;
  /** `--to <YYYY-MM-DD>` of `usage`. */
  readonly to?: string;
  /** `--daily-credits <n>` of `plans create` and `plans update`. */
  readonly dailyCredits?: number;
  /** `--credits-per-second <n>` of `plans create` and `plans update`. */
  readonly creditsPerSecond?: number;
  /** `--failover <true|false>` of `plans create` and `plans update`. */
  readonly failover?: boolean;
  /** `--format <csv|json>` of `usage export` (default csv). */
  readonly format?: 'csv' | 'json';
  /** `--output <file>` of `usage export` (default: standard output). */
  readonly output?: string;
  /** `--wallet <0x…>` of `payments`: the payer's address. */
  readonly wallet?: string;
  /** `--demo` of `keys` and `usage`: work on the store of `tollgate demo` (without it they need the gateway's `--config`). */
  readonly demo: boolean;
  /** `--json`: commands print JSON. */
  readonly json: boolean;
  /** `--help`. */
  readonly help: boolean;
  /** `--version`. */
  readonly version: boolean;
}

/** Every flag the CLI accepts (`parseArgs` options); the help text and the README list each one. */
export const CLI_FLAGS = {
  config: { type: 'string', short: 'c' },
  port: { type: 'string', short: 'p' },
  host: { type: 'string' },
  'admin-port': { type: 'string' },
  'log-level': { type: 'string' },
  'data-dir': { type: 'string' },
  redis: { type: 'string' },
  workers: { type: 'string', short: 'w' },
  'redis-cluster': { type: 'string' },
  plan: { type: 'string' },
  id: { type: 'string' },
  label: { type: 'string' },
  day: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  'daily-credits': { type: 'string' },
  'credits-per-second': { type: 'string' },
  failover: { type: 'string' },
  format: { type: 'string' },
  output: { type: 'string', short: 'o' },
  wallet: { type: 'string' },
  demo: { type: 'boolean', default: false },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
  version: { type: 'boolean', short: 'v', default: false },
} as const satisfies Record<string, { type: 'string' | 'boolean'; short?: string; default?: boolean }>;

/** Reads the `PORT` environment variable; throws when it is set but not a port number. */
export function portFromEnv(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT: "${value}" is not a port number`);
  return port;
}

/** Parses `argv` (without node and script). Throws with a readable message on unknown flags or commands. */
export function parseCli(argv: readonly string[]): CliOptions {
  const { values, positionals } = parseArgs({
    args: [...argv],
    options: CLI_FLAGS,
    strict: true,
    allowPositionals: true,
  });
  let port: number | undefined;
  if (values.port !== undefined) {
    port = Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port: "${values.port}" is not a port number`);
  }
  let adminPort: number | undefined;
  if (values['admin-port'] !== undefined) {
    adminPort = Number(values['admin-port']);
    if (!Number.isInteger(adminPort) || adminPort < 0 || adminPort > 65535) throw new Error(`--admin-port: "${values['admin-port']}" is not a port number`);
  }
  let workers: number | 'auto' | undefined;
  if (values.workers !== undefined) {
    workers = values.workers === 'auto' ? 'auto' : Number(values.workers);
    if (workers !== 'auto' && (!Number.isInteger(workers) || workers < 1)) throw new Error(`--workers: "${values.workers}" is not a positive whole number or "auto"`);
  }
  const number = (flag: string, value: string | undefined): number | undefined => {
    if (value === undefined) return undefined;
    const parsed = Number(value);
    if (value.trim() === '' || !Number.isFinite(parsed)) throw new Error(`--${flag}: "${value}" is not a number`);
    return parsed;
  };
  let failover: boolean | undefined;
  if (values.failover !== undefined) {
    if (values.failover !== 'true' && values.failover !== 'false') throw new Error(`--failover: "${values.failover}" is not true or false`);
    failover = values.failover === 'true';
  }
  if (values.format !== undefined && values.format !== 'csv' && values.format !== 'json') throw new Error(`--format: "${values.format}" is not csv or json`);
  let command: CliCommand | undefined;
  if (positionals.length > 0) {
    const [name, ...args] = positionals;
    if (!CLI_COMMANDS.some((c) => c.name === name)) throw new Error(`unknown command "${name}" (commands: ${CLI_COMMANDS.map((c) => c.name).join(', ')})`);
    command = { name: name!, args };
  }
  return {
    config: values.config,
    port,
    host: values.host,
    adminPort,
    logLevel: values['log-level'],
    dataDir: values['data-dir'],
    redis: values.redis,
    workers,
    redisCluster: values['redis-cluster'],
    command,
    plan: values.plan,
    id: values.id,
    label: values.label,
    day: values.day,
    from: values.from,
    to: values.to,
    dailyCredits: number('daily-credits', values['daily-credits']),
    creditsPerSecond: number('credits-per-second', values['credits-per-second']),
    failover,
    format: values.format,
    output: values.output,
    wallet: values.wallet,
    demo: values.demo === true,
    json: values.json === true,
    help: values.help === true,
    version: values.version === true,
  };
}
