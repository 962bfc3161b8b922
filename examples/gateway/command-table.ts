import type { CliOptions } from './cli.js';

/**
 * One command of `tollgate`. Adding a command takes a module that exports its `run` and a row in
 * {@link CLI_COMMANDS}; `--help` lists it from there and the parser accepts its name.
 */
export interface CliCommandSpec {
  /** The first word on the command line (`keys`). */
  readonly name: string;
  /** Its forms, as `--help` shows them after `tollgate ` (`keys revoke <id>`). */
  readonly synopsis: readonly string[];
  /** What it does, one line. */
  readonly summary: string;
  /**
   * Runs it and resolves with the exit code (0 done, 1 failed or refused, 2 bad usage). The command's code
   * is imported when it runs, so `--help`, `--version` and `config check` load none of the plugins' drivers.
   */
  readonly run: (cli: CliOptions) => Promise<number>;
}

/** Every command, in the order `--help` lists them. */
export const CLI_COMMANDS: readonly CliCommandSpec[] = [
  {
    name: 'start',
    synopsis: ['start [--config <file>] [options]'],
    summary: "serves the networks of a configuration file (without --config, the demo's)",
    run: async (cli) => (await import('./serve.js')).serve(cli, 'start'),
  },
  {
    name: 'demo',
    synopsis: ['demo [options]'],
    summary: 'serves Ethereum-, Polygon- and Solana-like networks and a file-storage API on embedded, offline nodes (needs @tollgate/devnet)',
    run: async (cli) => (await import('./serve.js')).serve(cli, 'demo'),
  },
  {
    name: 'keys',
    synopsis: ['keys create --plan <plan> [--id <id>] [--label <text>]', 'keys list | keys rotate <id> | keys revoke <id> | keys plan <id> <plan>', "keys security <id> ['<json>']", 'keys pins <id>', 'keys credits <id> <credits> <reference>', 'keys payments <id>'],
    summary: 'manages API keys in the store the gateway uses (also while it runs)',
    run: async (cli) => (await import('./store-commands.js')).runStoreCommand(cli),
  },
  {
    name: 'plans',
    synopsis: ['plans list | plans delete <name>', 'plans create <name> --daily-credits <n> --credits-per-second <n> [--failover true|false]', 'plans update <name> [--daily-credits <n>] [--credits-per-second <n>] [--failover true|false]'],
    summary: 'manages plans beside the configuration file\'s, in the store the gateway uses (also while it runs)',
    run: async (cli) => (await import('./store-commands.js')).runStoreCommand(cli),
  },
  {
    name: 'usage',
    synopsis: ['usage <id> [--day YYYY-MM-DD | --from YYYY-MM-DD --to YYYY-MM-DD]', 'usage export --from YYYY-MM-DD [--to YYYY-MM-DD] [--format csv|json] [--output <file>]'],
    summary: "prints a key's calls and credits per day and method, and the bytes it keeps pinned; export: every key's usage, per day, network and method (billing)",
    run: async (cli) => (await import('./store-commands.js')).runStoreCommand(cli),
  },
  {
    name: 'payments',
    synopsis: ['payments --wallet <0x...>'],
    summary: 'lists the x402 payments a wallet made, whatever key they bought credits for (the payments plugin\'s journal, in the store the gateway uses)',
    run: async (cli) => (await import('./store-commands.js')).runStoreCommand(cli),
  },
  {
    name: 'config',
    synopsis: ['config check [<file>]'],
    summary: 'checks a configuration file as start would (every problem at once) and prints it resolved (defaults filled in, secrets masked)',
    run: async (cli) => (await import('./config-check.js')).configCommand(cli),
  },
];
