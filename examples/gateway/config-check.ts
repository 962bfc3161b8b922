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
 * plugins need and this installation lacks are noted) and prints it resolved as YAML: defaults filled in, secrets and every value taken from the
 * environment masked. An invalid file gets every problem at once, one line each naming the field.
 * Exit code 0 valid, 1 invalid or unreadable, 2 bad usage.
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
    if (problems.length > 0) {
      process.stderr.write(`invalid configuration in ${file}:\n  ${problems.join('\n  ')}\n`);
      return 1;
    }
    const shown = maskSecrets(maskFields(config, fromEnv));
    process.stdout.write(`# ${file}: valid. Resolved, with secrets masked (and every value taken from the environment):\n${stringify(shown)}`);
    // A matter of this installation, not of the file: said, but the file is valid.
    if (missing !== undefined) process.stderr.write(`note: ${missing.message.replace(/^tollgate: /, '')}; their plugins' settings were not checked\n`);
    return 0;
  } catch (error) {
    process.stderr.write(reportLoadFailure(error, file));
    return 1;
  }
}
