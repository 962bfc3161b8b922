#!/usr/bin/env node
import { parseCli, portFromEnv } from './cli.js';
import { CLI_COMMANDS } from './command-table.js';
import { HELP } from './help.js';
import { packageVersion } from './version.js';

/** The `tollgate` command: parses the command line and runs one command; resolves with the exit code. */
async function main(argv: readonly string[]): Promise<number> {
  let cli;
  try {
    cli = parseCli(argv);
    portFromEnv(process.env.PORT);
  } catch (error) {
    process.stderr.write(`tollgate: ${(error as Error).message}\nsee tollgate --help\n`);
    return 2;
  }
  if (cli.version) {
    process.stdout.write(`${packageVersion()}\n`);
    return 0;
  }
  if (cli.help || argv.length === 0) {
    process.stdout.write(HELP);
    return 0;
  }
  const command = CLI_COMMANDS.find((c) => c.name === cli.command?.name);
  if (command === undefined) {
    process.stderr.write(`tollgate: which command? (${CLI_COMMANDS.map((c) => c.name).join(', ')})\nsee tollgate --help\n`);
    return 2;
  }
  return command.run(cli);
}

process.exitCode = await main(process.argv.slice(2));
