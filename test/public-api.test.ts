/**
 * The package's public API, by audience: `tollgate` for embedders (kept small), `tollgate/plugin`,
 * `tollgate/family`, `tollgate/store`, `tollgate/transport` and `tollgate/upstream` for the authors of each kind of plugin.
 * Every value an entry exports is imported by a bundled plugin, an example, the devnet package or the
 * plugin-API tests, or named by the docs; docs/writing-plugins.md gives each entry's size. The signatures
 * themselves are reviewed in the API reports (api/*.api.md, checked by `.ci/api-report.ts`).
 */
import t from 'tap';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('..', import.meta.url));

function filesUnder(dir: string, extensions: readonly string[]): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(root, dir))) {
    if (name === 'node_modules' || name === 'dist' || (dir === 'docs' && name === 'api')) continue;
    const path = join(dir, name);
    if (statSync(join(root, path)).isDirectory()) out.push(...filesUnder(path, extensions));
    else if (extensions.some((extension) => name.endsWith(extension))) out.push(path);
  }
  return out;
}

/** Package subpath → the core file that is its entry. */
const ENTRIES: Readonly<Record<string, string>> = {
  tollgate: 'core/index.ts',
  'tollgate/plugin': 'core/plugin-api.ts',
  'tollgate/family': 'core/family-api.ts',
  'tollgate/store': 'core/store-api.ts',
  'tollgate/transport': 'core/transport-api.ts',
  'tollgate/upstream': 'core/upstream-api.ts',
};

const program = ts.createProgram(Object.values(ENTRIES).map((file) => join(root, file)), {
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  target: ts.ScriptTarget.ES2022,
  strict: true,
  skipLibCheck: true,
  customConditions: ['tollgate-source'],
});
const checker = program.getTypeChecker();
// `export type { SomeClass }` exports a type only, though its target is also a value.
const typeOnly = (symbol: ts.Symbol): boolean =>
  (symbol.declarations ?? []).some((declaration) => ts.isExportSpecifier(declaration) && (declaration.isTypeOnly || declaration.parent.parent.isTypeOnly));
function exportsOf(file: string): Array<{ name: string; value: boolean }> {
  const entry = checker.getSymbolAtLocation(program.getSourceFile(join(root, file))!)!;
  return checker.getExportsOfModule(entry).map((symbol) => {
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    return { name: symbol.getName(), value: (target.flags & ts.SymbolFlags.Value) !== 0 && !typeOnly(symbol) };
  });
}
const exported = Object.fromEntries(Object.entries(ENTRIES).map(([subpath, file]) => [subpath, exportsOf(file)]));

// What the users of the public API import from it, and what the docs name.
const users = [...filesUnder('plugins', ['.ts']), ...filesUnder('examples', ['.ts']), ...filesUnder('packages/devnet/src', ['.ts']), ...filesUnder('test/plugin-api', ['.ts'])];
const docs = [...filesUnder('docs', ['.md']), ...filesUnder('plugins', ['.md']), ...filesUnder('examples', ['.md']), 'README.md', 'packages/devnet/README.md'];
const imported = new Set<string>();
const importStatement = /(?:import|export)\s+(?:type\s+)?\{([^}]*)\}\s*from\s*'(?:(?:\.\.\/)+core\/(?:index|[a-z]+-api)\.js|tollgate(?:\/(?:plugin|family|store|transport|upstream))?)'/g;
for (const file of [...users, ...docs]) {
  for (const match of readFileSync(join(root, file), 'utf8').matchAll(importStatement)) {
    for (const part of match[1]!.split(',')) {
      const name = part.trim().replace(/^type\s+/, '').split(/\s+as\s+/)[0]!.trim();
      if (name !== '') imported.add(name);
    }
  }
}
const prose = docs.map((file) => readFileSync(join(root, file), 'utf8')).join('\n');
const named = (name: string): boolean => new RegExp(`\\b${name}\\b`).test(prose);

t.test('the embedders\' entry stays small', async (t) => {
  t.ok(exported.tollgate!.length <= 45, `tollgate exports ${exported.tollgate!.length} names (at most 45)`);
  t.ok(exported.tollgate!.some((e) => e.name === 'createGateway'));
});

t.test('each plugin author\'s entry stays small', async (t) => {
  for (const [subpath, names] of Object.entries(exported)) {
    if (subpath !== 'tollgate') t.ok(names.length <= 70, `${subpath} exports ${names.length} names (at most 70)`);
  }
});

t.test('every value an entry exports is used outside the core', async (t) => {
  for (const [subpath, names] of Object.entries(exported)) {
    const unused = names.filter((e) => e.value && !imported.has(e.name) && !named(e.name)).map((e) => e.name);
    t.same(unused, [], `${subpath}: no plugin, example, package or doc uses these: stop exporting them`);
  }
});

t.test('the docs give the size of each entry', async (t) => {
  const guide = readFileSync(join(root, 'docs/writing-plugins.md'), 'utf8');
  for (const [subpath, names] of Object.entries(exported)) {
    const values = names.filter((e) => e.value).length;
    const row = `| \`${subpath}\` | ${names.length} (${values} values, ${names.length - values} types) |`;
    t.match(guide, row, `docs/writing-plugins.md has the row "${row}"`);
  }
});
