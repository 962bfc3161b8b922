import { parseArgs } from 'node:util';

/** An operator command of the CLI (`keys ...`, `usage ...`) instead of serving. */
export interface CliCommand {
  /** `keys` or `usage`. */
  readonly name: 'keys' | 'usage';
  /** The words after it (`create`, `list`, `rotate <id>`, `revoke <id>`, `plan <id> <plan>`; or `<id>` for usage). */
  readonly args: readonly string[];
}

/** Parsed command-line options of the bundled gateway. */
export interface CliOptions {
  /** `--config <file>`: a JSON or YAML configuration file. */
  readonly config?: string;
  /** `--port <n>`: overrides `server.port`. */
  readonly port?: number;
  /** `--host <addr>`: overrides `server.host`. */
  readonly host?: string;
  /** `--log-level <level>`: overrides `log.level`. */
  readonly logLevel?: string;
  /** `--data-dir <dir>`: the SQLite store's folder (its file is `<dir>/tollgate.db`). */
  readonly dataDir?: string;
  /** `--redis <url>`: keep keys, balances and usage in Redis instead (several instances). */
  readonly redis?: string;
  /** An operator command, when one was given. */
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
  /** `--json`: commands print JSON. */
  readonly json: boolean;
  /** `--help`. */
  readonly help: boolean;
}

/** The `--help` text: every flag and command. */
export const HELP = `Usage: npm start -- [options]
       npm start -- keys create --plan <plan> [--id <id>] [--label <text>]
       npm start -- keys list | keys rotate <id> | keys revoke <id> | keys plan <id> <plan>
       npm start -- usage <id> [--day YYYY-MM-DD | --from YYYY-MM-DD --to YYYY-MM-DD]

Runs the Tollgate gateway. Without --config it serves Ethereum-, Polygon- and Solana-like networks
and a file-storage API on embedded, offline upstreams with demo API keys. Keys, balances and usage
are kept in SQLite (.data/tollgate.db), so they survive restarts; --redis shares them between
several instances.

The keys and usage commands work on the same store as the gateway (also while it runs) and exit.
A new or rotated key's API key and secret are printed once; only their hashes are stored.

Options:
  -c, --config <file>     JSON or YAML configuration file (see docs/configuration.md)
  -p, --port <n>          port to listen on (overrides server.port; 0 picks a free port)
      --host <addr>       interface to listen on (overrides server.host)
      --log-level <lvl>   fatal|error|warn|info|debug|trace|silent (overrides log.level)
      --data-dir <dir>    folder of the SQLite store (env TOLLGATE_DATA_DIR; default .data)
      --redis <url>       keep keys, balances and usage in Redis (env TOLLGATE_REDIS_URL)
      --plan <name>       keys create: the key's plan
      --id <id>           keys create: the key's id (default: generated)
      --label <text>      keys create: a note for operators
      --day <day>         usage: one UTC day (default today)
      --from <day>        usage: first day of a range
      --to <day>          usage: last day of a range
      --json              commands print JSON
  -h, --help              show this help

Environment:
  PORT                    port to listen on, when --port is not given
  TOLLGATE_DATA_DIR       folder of the SQLite store and the embedded IPFS node's blocks (as --data-dir)
  TOLLGATE_REDIS_URL      Redis URL (as --redis)
  TOLLGATE_ADMIN_TOKEN    turns on the admin API at /admin/v1 (docs/operations.md)
  TOLLGATE_METRICS_TOKEN  bearer token required by /metrics
  TOLLGATE_ANVIL_BINARY   an Anvil binary to use instead of the bundled one
`;

const COMMANDS = new Set(['keys', 'usage']);

/** Every flag the CLI accepts (`parseArgs` options); the help text and the README list each one. */
export const CLI_FLAGS = {
  config: { type: 'string', short: 'c' },
  port: { type: 'string', short: 'p' },
  host: { type: 'string' },
  'log-level': { type: 'string' },
  'data-dir': { type: 'string' },
  redis: { type: 'string' },
  plan: { type: 'string' },
  id: { type: 'string' },
  label: { type: 'string' },
  day: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
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
  let command: CliCommand | undefined;
  if (positionals.length > 0) {
    const [name, ...args] = positionals;
    if (!COMMANDS.has(name!)) throw new Error(`unknown command "${name}" (commands: keys, usage)`);
    command = { name: name as CliCommand['name'], args };
  }
  return {
    config: values.config,
    port,
    host: values.host,
    logLevel: values['log-level'],
    dataDir: values['data-dir'],
    redis: values.redis,
    command,
    plan: values.plan,
    id: values.id,
    label: values.label,
    day: values.day,
    from: values.from,
    to: values.to,
    json: values.json === true,
    help: values.help === true,
  };
}
