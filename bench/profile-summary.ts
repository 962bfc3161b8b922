/**
 * Summarizes `.cpuprofile` files: `node --import tsx bench/profile-summary.ts <file...> [--top N] [--origin REGEX]`.
 * `--origin` keeps only functions whose origin or location matches (e.g. `tollgate|rxjs`).
 */
import { parseArgs } from 'node:util';
import { formatProfile, summarizeProfile } from './lib/cpuprofile.js';

const { values, positionals } = parseArgs({
  args: process.argv.slice(2),
  options: { top: { type: 'string', default: '25' }, origin: { type: 'string' } },
  allowPositionals: true,
});
if (positionals.length === 0) {
  process.stderr.write('usage: node --import tsx bench/profile-summary.ts <file.cpuprofile...> [--top N] [--origin REGEX]\n');
  process.exit(2);
}
const top = Number(values.top);
const filter = values.origin === undefined ? undefined : new RegExp(values.origin);
for (const file of positionals) {
  const summary = summarizeProfile(file, filter === undefined ? top : Number.MAX_SAFE_INTEGER);
  const shown = filter === undefined ? summary : { ...summary, top: summary.top.filter((f) => filter.test(`${f.origin} ${f.location}`)).slice(0, top) };
  process.stdout.write(`${formatProfile(file, shown, 20)}\n\n`);
}
