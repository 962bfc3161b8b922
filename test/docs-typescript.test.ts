/**
 * Every TypeScript block of README.md, docs/*.md and the examples' READMEs type-checks as written, each
 * as a module of its own, with the strictest settings the project uses (strict, NodeNext,
 * noUncheckedIndexedAccess). A block that imports `./name.js` gets the block of the same page that
 * exports `name` beside it (the guide's test imports its family and stage so). `test/package-consumer`
 * compiles them again against the packed package.
 */
import t from 'tap';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { STRICT_USER_OPTIONS } from './helpers/strict-compiler-options.js';
import { docBlocks, docPages, type DocBlock } from './helpers/doc-blocks.js';

// One compilation of every block with the project's types: over two minutes on two busy cores.
t.setTimeout(400_000);

const root = fileURLToPath(new URL('..', import.meta.url));
const pages = docPages(root);
const blocks: DocBlock[] = pages.flatMap((page) => docBlocks(page, readFileSync(join(root, page), 'utf8'), join(root, page, '..')));
t.ok(blocks.length >= 30, `the pages hold TypeScript blocks (${blocks.length})`);
t.ok(blocks.some((b) => b.source.includes('class MapCreditLedger')), "the guide's credit ledger is among them");

// Under test/, so that `tollgate` and the drivers resolve from this repository's node_modules.
const dir = t.testdir();
const files = blocks.flatMap((block) => block.files(dir));
for (const file of files) {
  mkdirSync(join(file.path, '..'), { recursive: true });
  writeFileSync(file.path, file.text);
}

t.test('every block compiles, strict and NodeNext', async (t) => {
  const program = ts.createProgram(files.map((f) => f.path), {
    ...STRICT_USER_OPTIONS,
    skipLibCheck: true,
    experimentalDecorators: true,
    emitDecoratorMetadata: true,
    customConditions: ['tollgate-source'],
  });
  const diagnostics = ts.getPreEmitDiagnostics(program).filter((d) => d.file !== undefined && files.some((f) => f.path === d.file!.fileName));
  const byFile = new Map<string, string[]>();
  for (const d of diagnostics) {
    const file = files.find((f) => f.path === d.file!.fileName)!;
    const { line } = d.file!.getLineAndCharacterOfPosition(d.start ?? 0);
    byFile.set(file.origin, [...(byFile.get(file.origin) ?? []), `line ${line + 1 - file.offset}: TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`]);
  }
  for (const block of blocks) t.same(byFile.get(block.origin) ?? [], [], `${block.origin} compiles`);
});
