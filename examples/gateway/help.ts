import { CLI_COMMANDS } from './command-table.js';
import { docsPath } from './docs-path.js';

const commands = CLI_COMMANDS.flatMap((command) => command.synopsis.map((form) => `  tollgate ${form}`));
const summaries = CLI_COMMANDS.map((command) => `  ${command.name.padEnd(8)} ${command.summary}`);

/** The `--help` text: every command, flag and environment variable. */
export const HELP = `Usage:
${commands.join('\n')}
  tollgate --help | --version

Commands:
${summaries.join('\n')}

The gateway keeps keys, managed plans, balances and usage in SQLite (.data/tollgate.db), so they
survive restarts; --redis shares them between several instances. The keys, plans and usage commands
work on the same store (also while the gateway runs) and exit; they need the gateway's configuration
(--config or TOLLGATE_CONFIG, as start) or --demo, and print the store they used. A new or rotated
key's API key and secret are printed once; only their hashes are stored. Plans of the configuration
file cannot be managed; running gateways apply a plan change from the next call (SQLite: within a
second).

Options:
  -c, --config <file>     JSON or YAML configuration file; \${VAR} reads the environment (env TOLLGATE_CONFIG)
  -p, --port <n>          port to listen on (overrides server.port; 0 picks a free port)
      --host <addr>       interface to listen on (overrides server.host)
      --admin-port <n>    serve the admin API, dashboard and /metrics on this port only, not on the
                          public one (overrides server.adminListen.port; interface 127.0.0.1 unless set)
      --log-level <lvl>   fatal|error|warn|info|debug|trace|silent (overrides log.level)
      --data-dir <dir>    folder of the SQLite store and of the embedded IPFS node's blocks (default .data)
      --redis <url>       keep keys, balances and usage in Redis (env TOLLGATE_REDIS_URL)
  -w, --workers <n|auto>  worker processes serving the port (overrides server.workers; auto: one per core)
      --redis-cluster <host:port,...>
                          keep them in a Redis Cluster, named by some of its nodes (env TOLLGATE_REDIS_CLUSTER)
      --plan <name>       keys create: the key's plan
      --id <id>           keys create: the key's id (default: generated)
      --label <text>      keys create: a note for operators
      --day <day>         usage: one UTC day (default today)
      --from <day>        usage: first day of a range
      --to <day>          usage: last day of a range
      --daily-credits <n> plans create, update: credits a key may spend per UTC day
      --credits-per-second <n>
                          plans create, update: sustained throughput
      --failover <true|false>
                          plans create, update: whether calls may fail over to a partner (default false)
      --format <csv|json> usage export: the format (default csv)
  -o, --output <file>     usage export: write to this file (default: standard output)
      --wallet <0x...>    payments: the payer's address
      --demo              keys, plans, usage: the store of tollgate demo (instead of --config)
      --json              commands print JSON
  -h, --help              show this help
  -v, --version           print the version

Environment:
  PORT                    port to listen on, when --port is not given
  TOLLGATE_CONFIG         the configuration file, when --config is not given
  TOLLGATE_DATA_DIR       as --data-dir
  TOLLGATE_REDIS_URL      Redis URL (as --redis)
  TOLLGATE_REDIS_CLUSTER  Redis Cluster nodes (as --redis-cluster)
  TOLLGATE_ADMIN_TOKEN    turns on the admin API at /admin/v1 (${docsPath('operations.md')})
  TOLLGATE_METRICS_TOKEN  bearer token required by /metrics
  TOLLGATE_ANVIL_BINARY   an Anvil binary to use instead of the bundled one

Guides: ${docsPath('configuration.md')}, ${docsPath('operations.md')} and the others beside them.
`;
