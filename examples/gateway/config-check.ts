import { stringify } from 'yaml';
import { readConfigFile } from 'tollgate/plugin';
import type { CliOptions } from './cli.js';
import { loadCliConfig, reportLoadFailure } from './cli-config.js';
import { CONFIG_ENV, configFileOf } from './config-file.js';
import { gatewayProblems } from './gateway-problems.js';
import { maskFields, maskSecrets } from './mask-secrets.js';

const USAGE = `usage: tollgate config check [<file>]   (else --config <file>, else ${CONFIG_ENV})\n`;

/**
 * `tollgate config check [<file>]` (or `--config <file>`, or `TOLLGATE_CONFIG`): checks a configuration
 * file as `tollgate start` would before it listens (the schema, every plugin's settings, families,
 * stores, cross-references, with the same flags and environment applied; packages the selected
 * plugins need and this installation lacks are a problem, as for start) and prints it resolved as YAML: defaults filled in, secrets and every value taken from the
 * environment masked. An invalid file gets every problem at once, one line each naming the field.
 * Exit code 0 valid, 1 invalid, unreadable or missing a package start needs, 2 bad usage.
 */
export async function configCommand(cli: CliOptions, env: Readonly<Record<string, string | undefined>> = process.env): Promise<number> {
  const [verb, named, ...rest] = cli.command?.args ?? [];
  if (verb !== 'check' || rest.length > 0 || (named !== undefined && cli.config !== undefined && named !== cli.config)) {
    process.stderr.write(USAGE);
    return 2;
  }
  const file = named ?? configFileOf(cli, env);
  if (file === undefined) {
    process.stderr.write(`tollgate config check: which file?\n${USAGE}`);
    return 2;
  }
  try {
    const { fromEnv } = await readConfigFile(file, env);
    const config = await loadCliConfig({ ...cli, config: file }, env);
    const { problems, missing } = await gatewayProblems(config);
    // A missing driver is a problem as start has it: start would refuse, and what its plugins check was not checked.
    const lines = missing === undefined ? problems : [...problems, `${missing.message.replace(/^tollgate: /, '')} (the settings of the plugins that need them, and the network families those provide, are checked once they are installed)`];
    if (lines.length > 0) {
      process.stderr.write(`${problems.length > 0 ? 'invalid configuration in' : 'tollgate start would refuse'} ${file}:\n  ${lines.join('\n  ')}\n`);
      return 1;
    }
    const shown = maskSecrets(maskFields(config, fromEnv));
    process.stdout.write(`# ${file}: valid. Resolved, with secrets masked (and every value taken from the environment):\n${stringify(shown)}`);
    return 0;
  } catch (error) {
    process.stderr.write(reportLoadFailure(error, file));
    return 1;
  }
}
