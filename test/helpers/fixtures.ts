import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The shared conformance folder, checked out beside the repository (or where `TOLLGATE_CONFORMANCE_DIR` says). */
export const conformanceDir = process.env.TOLLGATE_CONFORMANCE_DIR ?? fileURLToPath(new URL('../../../shared/conformance/', import.meta.url));

/** One recorded exchange of an execution-apis `.io` fixture. */
export interface RecordedExchange {
  readonly file: string;
  readonly comment: string;
  readonly request: Record<string, unknown> & { method: string; params?: unknown[] };
  readonly response: Record<string, unknown>;
  /** The fixture says `// speconly:`: only the answer's shape is checked, as hive's rpc-compat does. */
  readonly specOnly?: boolean;
}

/** The execution-apis fixture folders: `tests` (the first ones collected) and `tests-pending` (every other `eth_` method folder). */
export type FixtureFolder = 'tests' | 'tests-pending';

/** Every `>>`/`<<` pair of the execution-apis test fixtures of `folder`. */
export function recordedExchanges(folder: FixtureFolder = 'tests'): RecordedExchange[] {
  const root = join(conformanceDir, 'execution-apis', folder);
  if (!existsSync(root)) throw new Error(`conformance fixtures not found at ${root}: check out shared/ beside the repository`);
  const out: RecordedExchange[] = [];
  for (const dir of readdirSync(root, { withFileTypes: true })) {
    if (!dir.isDirectory()) continue;
    for (const file of readdirSync(join(root, dir.name)).filter((f) => f.endsWith('.io')).sort()) {
      const lines = readFileSync(join(root, dir.name, file), 'utf8').split('\n');
      const comment = lines.filter((l) => l.startsWith('//')).join(' ');
      let request: RecordedExchange['request'] | undefined;
      for (const line of lines) {
        if (line.startsWith('>> ')) request = JSON.parse(line.slice(3)) as RecordedExchange['request'];
        if (line.startsWith('<< ') && request !== undefined) {
          const specOnly = lines.some((l) => l.startsWith('// speconly:'));
          out.push({ file: `${dir.name}/${file}`, comment, request, response: JSON.parse(line.slice(3)) as Record<string, unknown>, specOnly });
          request = undefined;
        }
      }
    }
  }
  return out;
}
