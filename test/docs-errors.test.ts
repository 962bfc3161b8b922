import t from 'tap';
import { readFileSync } from 'node:fs';
import { Errors } from '../core/index.js';

const page = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');
const rows = new Map<string, { code: number; status: number }>();
for (const line of page.split('\n')) {
  const cells = line.split('|').map((c) => c.trim());
  if (cells.length > 4 && /^[A-Z_]+$/.test(cells[1] ?? '')) rows.set(cells[1]!, { code: Number(cells[2]), status: Number(cells[3]) });
}

t.test('docs/errors.md lists every catalog entry with its code and HTTP status', async (t) => {
  for (const entry of Object.values(Errors)) {
    t.same(rows.get(entry.name), { code: entry.code, status: entry.httpStatus }, entry.name);
  }
  t.equal(rows.size, Object.keys(Errors).length, 'and nothing that is not in the catalog');
});
