import { createWriteStream } from 'node:fs';
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { KeyManagerError, usageExport, type UsageExportDeps } from 'tollgate/plugins/admin';
import type { CliOptions } from './cli.js';

/** The usage problem of a `usage export` command line, or undefined when it is well formed. */
export function exportUsageProblem(cli: CliOptions): string | undefined {
  if ((cli.command?.args.length ?? 0) !== 1) return 'usage export: takes no arguments besides --from, --to, --format and --output';
  if (cli.from === undefined) return 'usage export: --from YYYY-MM-DD is required (and --to, for more than one day)';
  if (cli.day !== undefined) return 'usage export: takes --from and --to, not --day';
  return undefined;
}

/**
 * `usage export`: every key's usage from `--from` to `--to`, one row per day, key, network and method,
 * as CSV or JSON, written to `--output` (replaced) or standard output as the store is read. Refusals
 * throw `KeyManagerError` before anything is written. Resolves with what it wrote to, for the message.
 */
export async function runUsageExport(cli: CliOptions, deps: UsageExportDeps, stdout: Writable = process.stdout): Promise<string> {
  const exported = await usageExport(deps, { from: cli.from, to: cli.to, format: cli.format });
  const target = cli.output === undefined ? stdout : createWriteStream(cli.output);
  try {
    // Standard output stays open for whoever runs the command; a file is closed once written.
    await pipeline(Readable.from(exported.chunks), target, { end: cli.output !== undefined });
  } catch (error) {
    if (error instanceof KeyManagerError) throw error;
    const where = cli.output === undefined ? 'standard output' : cli.output;
    throw new KeyManagerError('unavailable', `the export to ${where} stopped, incomplete: ${(error as Error).message}`);
  }
  return `usage of ${exported.from} to ${exported.to} (${exported.format}) written to ${cli.output ?? 'standard output'}`;
}
