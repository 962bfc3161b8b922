import t from 'tap';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkCore, FOLDER_IMPORTS, tableCycles } from '../.ci/check-core.js';

// The CI check that keeps the core's shape: it passes on the core as it is, and catches a folder table
// that is no order (a cycle, an arrow to an unknown folder), an import cycle (type-only included), an
// import between folders that the folder table does not allow, a folder the table does not know, an
// import of the package entry, and a network named in code.
t.test('the core as it is passes', async (t) => {
  t.same(checkCore(), { table: [], cycles: [], folders: [], names: [] });
});

t.test('a type-only cycle, an untabled folder import, an unknown folder and a network name are each reported', async (t) => {
  const dir = t.testdir();
  const core = join(dir, 'core');
  for (const folder of ['keys', 'util', 'gateway', 'engine']) mkdirSync(join(core, folder), { recursive: true });
  writeFileSync(join(core, 'keys', 'a.ts'), "import type { B } from './b.js';\nexport interface A { b: B }\n");
  writeFileSync(join(core, 'keys', 'b.ts'), "import type { A } from './a.js';\nexport interface B { a: A }\n");
  writeFileSync(join(core, 'util', 'up.ts'), "import type { G } from '../gateway/g.js';\nexport type U = G;\n");
  writeFileSync(join(core, 'gateway', 'g.ts'), "// a comment may say evm\nexport const revert = /execution reverted/;\nexport type G = string;\n");
  writeFileSync(join(core, 'engine', 'e.ts'), "import type { G } from '../gateway/g.js';\nexport type E = G;\n");
  writeFileSync(join(core, 'index.ts'), "export type { G } from './gateway/g.js';\n");
  writeFileSync(join(core, 'gateway', 'h.ts'), "import type { G } from '../index.js';\nexport type H = G;\n");
  const found = checkCore(core);
  t.equal(found.cycles.length, 1);
  t.match(found.cycles[0]!.join(' '), /keys\/a\.ts.*keys\/b\.ts/);
  t.equal(found.folders.length, 3, found.folders.join('\n'));
  t.match(found.folders.join('\n'), /util\/up\.ts imports .*gateway\/g\.ts: core\/util\/ may not import core\/gateway\//);
  t.match(found.folders.join('\n'), /engine\/e\.ts sits in core\/engine\/, a folder the table in \.ci\/check-core\.ts does not list/);
  t.match(found.folders.join('\n'), /gateway\/h\.ts imports the package entry .*index\.ts/);
  t.equal(found.names.length, 1, 'the comment is not counted');
  t.match(found.names[0], /gateway\/g\.ts:2 names "execution reverted"/);
});

t.test('a folder table with a cycle, two-way or longer, or an arrow to an unknown folder is refused', async (t) => {
  t.same(tableCycles(FOLDER_IMPORTS), [], 'the core\'s table is an order');
  t.same(tableCycles({ util: [], keys: ['util', 'plugin'], plugin: ['keys'] }), ['keys -> plugin -> keys: the folder table is not an order']);
  t.same(tableCycles({ a: ['b'], b: ['c'], c: ['a'], d: ['a'] }), ['a -> b -> c -> a: the folder table is not an order']);
  t.same(tableCycles({ a: ['ghost'] }), ['a -> ghost: core/ghost/ is not in the table']);
  // The code is checked against a table too, and a table that is no order fails the check even when the code follows it.
  const dir = t.testdir();
  const core = join(dir, 'core');
  for (const folder of ['keys', 'plugin']) mkdirSync(join(core, folder), { recursive: true });
  writeFileSync(join(core, 'keys', 'k.ts'), "import type { P } from '../plugin/p.js';\nexport type K = P;\n");
  writeFileSync(join(core, 'plugin', 'p.ts'), "export type P = string;\n");
  const found = checkCore(core, { keys: ['plugin'], plugin: ['keys'] });
  t.same(found, { table: ['keys -> plugin -> keys: the folder table is not an order'], cycles: [], folders: [], names: [] });
});

t.test('docs/architecture.md shows the folder table the check enforces', async (t) => {
  const doc = readFileSync(new URL('../docs/architecture.md', import.meta.url), 'utf8');
  for (const [folder, allowed] of Object.entries(FOLDER_IMPORTS)) {
    const row = `| \`${folder}\` | ${allowed.length === 0 ? 'nothing of the core' : allowed.map((f) => `\`${f}\``).join(', ')} |`;
    t.match(doc, row, `the row of ${folder}`);
  }
});
