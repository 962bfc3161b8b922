// Checks what the type checker cannot: the core's imports form no cycle (type-only imports included)
// and follow the folder table below, and no core file names a network, protocol, transport or store in code.
// Usage: node --import tsx .ci/check-core.ts   (exit 1 and one line per problem when a check fails)
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const root = resolve(dirname(new URL(import.meta.url).pathname), '..');
const core = join(root, 'core');

/**
 * The core's folders, each named for what it holds, and the folders each may import. The table is an
 * order, checked to have no cycle ({@link tableCycles}): the foundation (`util`, `config`, `errors`)
 * imports nothing above it; `contracts` (the ports and contracts every other folder refers to: the request
 * context, stores, selector, stage and plugin contracts, the runtime) imports only the foundation; the
 * concern folders hold implementations and import contracts, the foundation and concerns below them; the
 * `gateway` assembles them. A new arrow between folders is a design decision: add it here, and to the
 * table in docs/architecture.md, in the same change. The package's entry files (`core/index.ts`,
 * `core/*-api.ts`) may import anything and nothing in the core imports them.
 */
export const FOLDER_IMPORTS: Readonly<Record<string, readonly string[]>> = {
  util: [],
  config: [],
  errors: [],
  contracts: ['config', 'errors', 'util'],
  plugin: [],
  http: ['config'],
  context: ['contracts', 'errors'],
  keys: ['config', 'contracts', 'errors', 'util'],
  usage: ['contracts', 'util'],
  metering: ['contracts', 'usage', 'util'],
  jsonrpc: ['context', 'contracts', 'errors'],
  upstream: ['config', 'context', 'contracts', 'errors', 'jsonrpc', 'util'],
  network: ['config', 'context', 'contracts', 'jsonrpc', 'plugin', 'upstream'],
  pipeline: ['config', 'context', 'contracts', 'errors', 'jsonrpc', 'keys', 'upstream', 'util'],
  gateway: ['config', 'context', 'contracts', 'errors', 'jsonrpc', 'keys', 'metering', 'network', 'pipeline', 'plugin', 'upstream', 'usage', 'util'],
};

const ENTRY = '(entry)';

/** Words that belong to plugins: networks, node software, wire protocols of transports, stores. */
const FORBIDDEN = /\b(evm|eth_\w+|ethereum|solana|polygon|bor_\w+|ipfs|kubo|helia|anvil|litesvm|sqlite|redis|websocket|execution reverted|blockNumber|getSlot)\b|\/v3\b|\/ws\/|\/api\/v0/i;

/** The table's name for where a core file sits: its top folder, or the entry files at the root. */
export function folderOf(dir: string, file: string): string {
  const parts = relative(dir, file).split('/');
  return parts.length > 1 ? parts[0]! : ENTRY;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** Relative imports and re-exports of a file, type-only ones included, resolved to files. */
function importsOf(file: string, source: ts.SourceFile): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    let specifier: ts.Expression | undefined;
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) specifier = node.moduleSpecifier;
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) specifier = node.argument.literal;
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) specifier = node.arguments[0];
    if (specifier !== undefined && ts.isStringLiteral(specifier) && specifier.text.startsWith('.')) {
      found.push(resolve(dirname(file), specifier.text).replace(/\.js$/, '.ts'));
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The names and literals of a file's code, comments left out: doc comments may show how plugins are used. */
function codeOf(source: ts.SourceFile): Array<{ line: number; text: string }> {
  const out: Array<{ line: number; text: string }> = [];
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node) || ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node) || ts.isRegularExpressionLiteral(node)) {
      out.push({ line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1, text: node.getText(source) });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/** Strongly connected components with more than one file (Tarjan), i.e. the import cycles. */
function cycles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const indexOf = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const connect = (v: string): void => {
    indexOf.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!indexOf.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, indexOf.get(w)!));
    }
    if (low.get(v) === indexOf.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!indexOf.has(v)) connect(v);
  return found;
}

/**
 * The cycles of a folder table, each as its folders in a loop (`a -> b -> a`), and the arrows to folders
 * the table does not list: a table with either is no order, and the code cannot be held to it.
 */
export function tableCycles(table: Readonly<Record<string, readonly string[]>>): string[] {
  const unknown = Object.entries(table).flatMap(([from, allowed]) => allowed.filter((to) => table[to] === undefined).map((to) => `${from} -> ${to}: core/${to}/ is not in the table`));
  const graph = new Map(Object.entries(table).map(([from, allowed]) => [from, allowed.filter((to) => table[to] !== undefined)]));
  const loops = cycles(graph).map((component) => {
    // One loop through the component, for the message: follow arrows that stay inside it back to the start.
    const inside = new Set(component);
    const path = [component[0]!];
    for (let at = component[0]!; ; ) {
      const next = graph.get(at)!.find((to) => inside.has(to) && (to === path[0] || !path.includes(to)))!;
      path.push(next);
      if (next === path[0]) break;
      at = next;
    }
    return `${path.join(' -> ')}: the folder table is not an order`;
  });
  return [...loops, ...unknown];
}

export interface CoreProblems {
  /** Cycles of the folder table itself (see {@link tableCycles}). */
  readonly table: string[];
  readonly cycles: string[][];
  readonly folders: string[];
  readonly names: string[];
}

/** Runs every check over `dir` (the core by default) against `table` (the core's by default). */
export function checkCore(dir = core, table: Readonly<Record<string, readonly string[]>> = FOLDER_IMPORTS): CoreProblems {
  const graph = new Map<string, string[]>();
  const folders: string[] = [];
  const names: string[] = [];
  for (const file of filesUnder(dir)) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const imports = importsOf(file, source);
    graph.set(file, imports.filter((i) => i.startsWith(dir)));
    for (const target of imports) {
      if (!target.startsWith(dir)) continue;
      const from = folderOf(dir, file);
      const to = folderOf(dir, target);
      if (from === to || from === ENTRY) continue;
      const allowed = table[from];
      if (allowed === undefined) folders.push(`${relative(root, file)} sits in core/${from}/, a folder the table in .ci/check-core.ts does not list`);
      else if (to === ENTRY) folders.push(`${relative(root, file)} imports the package entry ${relative(root, target)}`);
      else if (!allowed.includes(to)) folders.push(`${relative(root, file)} imports ${relative(root, target)}: core/${from}/ may not import core/${to}/ (see FOLDER_IMPORTS)`);
    }
    for (const token of codeOf(source)) {
      const match = FORBIDDEN.exec(token.text);
      if (match !== null) names.push(`${relative(root, file)}:${token.line} names "${match[0]}"`);
    }
  }
  return { table: tableCycles(table), cycles: cycles(graph).map((c) => c.map((f) => relative(root, f))), folders, names };
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)) {
  const problems = checkCore();
  for (const line of problems.table) console.log(`folder table: ${line}`);
  for (const cycle of problems.cycles) console.log(`import cycle: ${cycle.join(' <-> ')}`);
  for (const line of problems.folders) console.log(`folders: ${line}`);
  for (const line of problems.names) console.log(`network names: ${line}`);
  const count = problems.table.length + problems.cycles.length + problems.folders.length + problems.names.length;
  console.log(count === 0 ? 'core check: the folder table is an order, no file import cycle, folder imports as tabled, no network names' : `core check: ${count} problem(s)`);
  process.exitCode = count === 0 ? 0 : 1;
}
