import t from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkCore } from '../.ci/check-core.js';

// The CI check that keeps the core's shape: it passes on the core as it is, and catches an import
// cycle (type-only included), an import pointing up the layers, and a network named in code.
t.test('the core as it is passes', async (t) => {
  t.same(checkCore(), { cycles: [], upward: [], names: [] });
});

t.test('a type-only cycle, an upward import and a network name are each reported', async (t) => {
  const dir = t.testdir();
  const core = join(dir, 'core');
  for (const folder of ['leaves', 'model', 'engine']) mkdirSync(join(core, folder), { recursive: true });
  writeFileSync(join(core, 'model', 'a.ts'), "import type { B } from './b.js';\nexport interface A { b: B }\n");
  writeFileSync(join(core, 'model', 'b.ts'), "import type { A } from './a.js';\nexport interface B { a: A }\n");
  writeFileSync(join(core, 'leaves', 'up.ts'), "import type { G } from '../engine/g.js';\nexport type U = G;\n");
  writeFileSync(join(core, 'engine', 'g.ts'), "// a comment may say evm\nexport const revert = /execution reverted/;\nexport type G = string;\n");
  const found = checkCore(core);
  t.equal(found.cycles.length, 1);
  t.match(found.cycles[0]!.join(' '), /model\/a\.ts.*model\/b\.ts/);
  t.equal(found.upward.length, 1);
  t.match(found.upward[0], /leaves\/up\.ts imports .*engine\/g\.ts from a layer above it/);
  t.equal(found.names.length, 1, 'the comment is not counted');
  t.match(found.names[0], /engine\/g\.ts:2 names "execution reverted"/);
});
