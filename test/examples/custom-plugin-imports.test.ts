import t from 'tap';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

// examples/custom-plugin is written as a separate package would be: it may import only the public
// entry points of Tollgate, Node's builtins and its own files. This checker reads every specifier the
// TypeScript parser finds (imports, re-exports, dynamic imports, import types, require calls).

const root = fileURLToPath(new URL('../../', import.meta.url));
const exampleDir = join(root, 'examples', 'custom-plugin');
/** The only file that may assemble a gateway from bundled plugins. */
const SERVER_FILE = 'server.ts';
/** The package's entries by audience (`tollgate/plugin`, `tollgate/family`...): its exports but the root, the plugins and package.json. */
const AUDIENCE_ENTRIES = Object.keys((JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, unknown> }).exports)
  .filter((key) => key !== '.' && key !== './package.json' && !key.includes('*'))
  .map((key) => `tollgate/${key.slice(2)}`);

interface Violation {
  readonly file: string;
  readonly line: number;
  readonly specifier: string;
  readonly reason: string;
}

/** Every module specifier in `source`, with its line (computed specifiers are reported as `undefined`). */
function specifiersOf(fileName: string, source: string): Array<{ specifier: string | undefined; line: number }> {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: Array<{ specifier: string | undefined; line: number }> = [];
  const add = (node: ts.Node, expression: ts.Node | undefined): void => {
    const line = file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;
    found.push({ specifier: expression !== undefined && ts.isStringLiteralLike(expression) ? expression.text : undefined, line });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) {
      if (node.moduleSpecifier !== undefined) add(node, node.moduleSpecifier);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node, node.moduleReference.expression);
    } else if (ts.isCallExpression(node) && (node.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(node.expression) && node.expression.text === 'require'))) {
      add(node, node.arguments[0]);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node, node.argument.literal);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/** Why `specifier` may not appear in `file` (a path relative to the example's folder), or undefined when it may. */
function problemOf(file: string, specifier: string | undefined): string | undefined {
  if (specifier === undefined) return 'computed specifier: only string literals can be checked';
  if (specifier === 'tollgate' || AUDIENCE_ENTRIES.includes(specifier)) return undefined;
  const plugin = /^tollgate\/plugins\/([a-z0-9-]+)$/.exec(specifier);
  if (plugin !== null) {
    if (file !== SERVER_FILE) return `plugin entry points are for ${SERVER_FILE} only; plugin code imports 'tollgate/plugin'`;
    return existsSync(join(root, 'plugins', plugin[1]!, 'index.ts')) ? undefined : `no plugin "${plugin[1]}" (plugins/${plugin[1]}/index.ts)`;
  }
  if (specifier === '@tollgate/devnet') {
    return file === SERVER_FILE ? undefined : `the embedded devnet is for ${SERVER_FILE}'s demo only`;
  }
  if (specifier.startsWith('node:')) return isBuiltin(specifier) ? undefined : 'not a Node builtin';
  if (specifier.startsWith('./') || specifier.startsWith('../')) {
    const target = resolve(exampleDir, dirname(file), specifier);
    return target.startsWith(exampleDir + sep) ? undefined : `leaves examples/custom-plugin/ (resolves to ${relative(root, target)})`;
  }
  return `only 'tollgate' and its entries by audience (${AUDIENCE_ENTRIES.map((e) => `'${e}'`).join(', ')}), 'tollgate/plugins/<name>' and '@tollgate/devnet' (server.ts), node:* builtins and the package's own files may be imported`;
}

/** The violations of one file; `file` is its path relative to the example's folder. */
function check(file: string, source: string): Violation[] {
  const out: Violation[] = [];
  for (const { specifier, line } of specifiersOf(file, source)) {
    const reason = problemOf(file, specifier);
    if (reason !== undefined) out.push({ file, line, specifier: specifier ?? '<computed>', reason });
  }
  return out;
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === 'node_modules') return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return tsFiles(path);
    return entry.name.endsWith('.ts') ? [relative(exampleDir, path)] : [];
  });
}

t.test('every file of examples/custom-plugin imports only what a separate package could', async (t) => {
  const files = tsFiles(exampleDir);
  t.ok(files.includes('index.ts') && files.includes(SERVER_FILE), `found the package's files: ${files.join(', ')}`);
  let specifiers = 0;
  for (const file of files) {
    const source = readFileSync(join(exampleDir, file), 'utf8');
    specifiers += specifiersOf(file, source).length;
    t.same(check(file, source), [], `${file}: no forbidden import`);
  }
  t.ok(specifiers >= 10, `the parser found the specifiers (${specifiers})`);
});

t.test('the checker catches what a separate package could not import', async (t) => {
  const bad: Array<[file: string, source: string, specifier: string]> = [
    ['allowlist.ts', "import { createGateway } from '../../core/gateway.js';\n", '../../core/gateway.js'],
    ['allowlist.ts', "export { Errors } from '../../core/index.js';\n", '../../core/index.js'],
    ['allowlist.ts', "import type { Logger } from 'pino';\n", 'pino'],
    ['allowlist.ts', "import { container } from 'tsyringe';\n", 'tsyringe'],
    ['allowlist.ts', "import { httpTransport } from 'tollgate/plugins/http';\n", 'tollgate/plugins/http'],
    ['allowlist.ts', "import { devnet } from '@tollgate/devnet';\n", '@tollgate/devnet'],
    ['allowlist.ts', "const core = await import('../../core/index.js');\n", '../../core/index.js'],
    ['allowlist.ts', "type G = import('../../core/gateway.js').Gateway;\n", '../../core/gateway.js'],
    ['allowlist.ts', "import gateway = require('tollgate/core/gateway');\n", 'tollgate/core/gateway'],
    ['allowlist.ts', "const name = 'x';\nawait import(name);\n", '<computed>'],
    ['allowlist.ts', "import { readFile } from 'node:nope';\n", 'node:nope'],
    ['allowlist.ts', "import type { MethodDefinition } from 'tollgate/families';\n", 'tollgate/families'],
    ['allowlist.ts', "import manifest from 'tollgate/package.json';\n", 'tollgate/package.json'],
    ['nested/deep.ts', "import '../../../plugins/evm/index.js';\n", '../../../plugins/evm/index.js'],
    [SERVER_FILE, "import { nope } from 'tollgate/plugins/nope';\n", 'tollgate/plugins/nope'],
    [SERVER_FILE, "import { EVM_METHODS } from 'tollgate/plugins/evm/methods.js';\n", 'tollgate/plugins/evm/methods.js'],
  ];
  for (const [file, source, specifier] of bad) {
    const violations = check(file, source);
    t.equal(violations.length, 1, `${file}: ${source.trim()} is one violation`);
    t.equal(violations[0]?.specifier, specifier);
  }
  t.match(check('allowlist.ts', "import x from '../../core/gateway.js';\n")[0], { line: 1, reason: /leaves examples\/custom-plugin/ });
});

t.test('the checker lets through what a separate package may import', async (t) => {
  const good = [
    "import { Errors } from 'tollgate'; import { type Stage } from 'tollgate/plugin';\nexport { step } from 'tollgate/plugin';\n",
    "import type { MethodDefinition } from 'tollgate/family';\nimport type { CreditLedger } from 'tollgate/store';\n",
    "import { readFile } from 'node:fs/promises';\nimport type { AddressInfo } from 'node:net';\n",
    "import { refusalOf } from './allowlist-rules.js';\nexport * from './origin-pattern.js';\n",
    "const m = await import('./geth-extras.js');\n",
  ];
  for (const source of good) t.same(check('allowlist.ts', source), [], source.trim());
  t.same(check('nested/deep.ts', "import '../index.js';\n"), [], 'a relative path that stays inside the package');
  t.same(check(SERVER_FILE, "import { httpTransport } from 'tollgate/plugins/http';\nimport { devnet } from '@tollgate/devnet';\n"), [], 'server.ts may use plugin entry points and the embedded devnet');
});
