import { stringify } from 'yaml';
import { loadConfigFile } from 'tollgate';
import type { CliOptions } from './cli.js';
import { reportLoadFailure } from './cli-config.js';
import { maskSecrets } from './mask-secrets.js';

/**
 * `tollgate config check <file>`: validates a configuration file as `tollgate start` would and prints it
 * resolved (defaults filled in, secrets masked) as YAML; an invalid file gets one line per problem, each
 * naming the field. Exit code 0 valid, 1 invalid or unreadable, 2 bad usage.
 */
export async function configCommand(cli: CliOptions): Promise<number> {
  const [verb, file, ...rest] = cli.command?.args ?? [];
  if (verb !== 'check' || file === undefined || rest.length > 0) {
    process.stderr.write('usage: tollgate config check <file>\n');
    return 2;
  }
  try {
    const config = await loadConfigFile(file);
    process.stdout.write(`# ${file}: valid. Resolved, with secrets masked:\n${stringify(maskSecrets(config))}`);
    return 0;
  } catch (error) {
    process.stderr.write(reportLoadFailure(error, file));
    return 1;
  }
}
