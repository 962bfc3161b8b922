/**
 * Each plugin entry exports its factory, its settings types and what users of the plugin need, and its
 * README lists exactly those names (under "## Exports"), so a new export is visible where users look.
 */
import t from 'tap';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('..', import.meta.url));
const plugins = readdirSync(join(root, 'plugins')).filter((name) => existsSync(join(root, 'plugins', name, 'index.ts')));
const program = ts.createProgram(plugins.map((name) => join(root, 'plugins', name, 'index.ts')), {
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  target: ts.ScriptTarget.ES2022,
  strict: true,
  skipLibCheck: true,
  experimentalDecorators: true,
  customConditions: ['tollgate-source'],
});
const checker = program.getTypeChecker();

for (const name of plugins) {
  t.test(`plugins/${name}/README.md lists the entry's exports`, async (t) => {
    const entry = checker.getSymbolAtLocation(program.getSourceFile(join(root, 'plugins', name, 'index.ts'))!)!;
    const exported = checker.getExportsOfModule(entry).map((symbol) => symbol.getName()).sort();
    const readme = readFileSync(join(root, 'plugins', name, 'README.md'), 'utf8');
    const section = /## Exports\n([\s\S]*?)(?=\n## |$)/.exec(readme)?.[1] ?? '';
    const listed = [...section.matchAll(/^- `(\w+)`/gm)].map((m) => m[1]!).sort();
    t.same(listed, exported, `the README's "## Exports" list matches tollgate/plugins/${name}`);
  });
}
