import { parseArgs } from 'node:util';

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
  /** `--help`. */
  readonly help: boolean;
}

/** The `--help` text: every flag. */
export const HELP = `Usage: npm start -- [options]

Runs the Tollgate gateway. Without --config it serves an Ethereum-like and a Polygon-like
network on embedded, offline upstreams with a demo API key.

Options:
  -c, --config <file>     JSON or YAML configuration file (see docs/configuration.md)
  -p, --port <n>          port to listen on (overrides server.port; 0 picks a free port)
      --host <addr>       interface to listen on (overrides server.host)
      --log-level <lvl>   fatal|error|warn|info|debug|trace|silent (overrides log.level)
  -h, --help              show this help
`;

/** Parses `argv` (without node and script). Throws with a readable message on unknown flags. */
export function parseCli(argv: readonly string[]): CliOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      config: { type: 'string', short: 'c' },
      port: { type: 'string', short: 'p' },
      host: { type: 'string' },
      'log-level': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  let port: number | undefined;
  if (values.port !== undefined) {
    port = Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port: "${values.port}" is not a port number`);
  }
  return { config: values.config, port, host: values.host, logLevel: values['log-level'], help: values.help === true };
}
