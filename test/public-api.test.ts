/**
 * The core's public API holds what plugin authors use: every value it exports is imported by a bundled
 * plugin, an example, the devnet package or the plugin-API tests, or named by the docs; a type is
 * exported when one of those imports it or a public signature names it (`npm run docs` refuses a
 * signature that names an unexported type). Internals stay importable by path, for the core's own tests.
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

// The core's exports, values and types apart, as the compiler sees core/index.ts.
const program = ts.createProgram([join(root, 'core/index.ts')], {
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  target: ts.ScriptTarget.ES2022,
  strict: true,
  skipLibCheck: true,
  customConditions: ['tollgate-source'],
});
const checker = program.getTypeChecker();
const entry = checker.getSymbolAtLocation(program.getSourceFile(join(root, 'core/index.ts'))!)!;
// `export type { SomeClass }` exports a type only, though its target is also a value.
const typeOnly = (symbol: ts.Symbol): boolean =>
  (symbol.declarations ?? []).some((declaration) => ts.isExportSpecifier(declaration) && (declaration.isTypeOnly || declaration.parent.parent.isTypeOnly));
const exported = checker.getExportsOfModule(entry).map((symbol) => {
  const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
  return { name: symbol.getName(), value: (target.flags & ts.SymbolFlags.Value) !== 0 && !typeOnly(symbol) };
});

// What the users of the public API import from it, and what the docs name.
const users = [...filesUnder('plugins', ['.ts']), ...filesUnder('examples', ['.ts']), ...filesUnder('packages/devnet/src', ['.ts']), ...filesUnder('test/plugin-api', ['.ts'])];
const docs = [...filesUnder('docs', ['.md']), ...filesUnder('plugins', ['.md']), ...filesUnder('examples', ['.md']), 'README.md', 'packages/devnet/README.md'];
const imported = new Set<string>();
const importStatement = /(?:import|export)\s+(?:type\s+)?\{([^}]*)\}\s*from\s*'(?:(?:\.\.\/)+core\/index\.js|tollgate)'/g;
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

t.test('every value the core exports is used outside the core', async (t) => {
  const unused = exported.filter((e) => e.value && !imported.has(e.name) && !named(e.name)).map((e) => e.name);
  t.same(unused, [], 'no plugin, example, package or doc uses these: import them by path, or stop exporting them');
});

t.test('the docs give the size of the public API', async (t) => {
  const values = exported.filter((e) => e.value).length;
  const sentence = `${exported.length} names (${values} values, ${exported.length - values} types)`;
  t.match(readFileSync(join(root, 'docs/writing-plugins.md'), 'utf8'), sentence, `docs/writing-plugins.md says "${sentence}"`);
});
