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

t.test('docs/errors.md lists every refusal of the security plugin', async (t) => {
  const dir = new URL('../plugins/security/', import.meta.url);
  const reasons = new Set<string>();
  for (const file of ['allowlist-rules.ts', 'jwt.ts', 'security-stage.ts', 'plugin.ts']) {
    const source = readFileSync(new URL(file, dir), 'utf8');
    // `reason: '...'` / `reason: \`...\`` in refusal objects, and `refusal('<setting>', '<reason>', ...)`: the text before any `${`.
    for (const match of source.matchAll(/(?:reason: |refusal\('[^']+', )['`]([^'`$]+)/g)) reasons.add(match[1]!.replace(/:\s*$/, '').trim());
  }
  t.ok(reasons.size >= 15, `found the refusals (${reasons.size})`);
  for (const reason of reasons) t.ok(page.includes(reason), `documented: ${reason}`);
});
