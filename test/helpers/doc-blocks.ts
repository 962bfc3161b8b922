import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** A file written for a documentation block: where, its text, the block it shows, and how many lines precede the block's own. */
export interface DocFile {
  readonly path: string;
  readonly text: string;
  readonly origin: string;
  readonly offset: number;
}

/** One TypeScript block of a Markdown page. */
export interface DocBlock {
  /** `page#n (line L)`, what a failure names. */
  readonly origin: string;
  /** The block's code as written. */
  readonly source: string;
  /** The files to compile it as a module of its own in `dir`: the block, and the blocks of its page it imports as `./name.js`. */
  files(dir: string): DocFile[];
}

const FENCE = /^```(?:ts|typescript)\n([\s\S]*?)^```/gm;
const RELATIVE_IMPORT = /import\s*\{([^}]*)\}\s*from\s*'\.\/([\w-]+)\.js'/g;

/**
 * The TypeScript blocks of a Markdown page. A block's `./name.js` import is the block of the page that
 * exports what it imports, else the module `name.ts` beside the page (an example's own file).
 */
export function docBlocks(page: string, markdown: string, pageDir?: string): DocBlock[] {
  const found = [...markdown.matchAll(FENCE)].map((match, n) => ({
    n: n + 1,
    source: match[1]!,
    line: markdown.slice(0, match.index).split('\n').length + 1,
  }));
  const exporting = (name: string): (typeof found)[number] | undefined =>
    found.find((b) => new RegExp(`export (const|function|class|async function) ${name}\\b`).test(b.source));
  return found.map((block) => {
    const origin = `${page}#${block.n} (line ${block.line})`;
    return {
      origin,
      source: block.source,
      files(dir: string): DocFile[] {
        const folder = join(dir, `${page.replace(/[^\w]+/g, '-')}-${block.n}`);
        // `export {}` makes every block a module: top-level names of two blocks never meet.
        const files: DocFile[] = [{ path: join(folder, 'block.ts'), text: `${block.source}\nexport {};\n`, origin, offset: 0 }];
        for (const match of block.source.matchAll(RELATIVE_IMPORT)) {
          const names = match[1]!.split(',').map((name) => name.trim().replace(/^type\s+/, '')).filter(Boolean);
          const other = exporting(names[0]!);
          const text = other !== undefined ? `${other.source}\nexport {};\n` : pageDir !== undefined ? `export * from ${JSON.stringify(join(pageDir, `${match[2]}.js`))};\n` : undefined;
          if (text !== undefined) files.push({ path: join(folder, `${match[2]}.ts`), text, origin, offset: 0 });
        }
        return files;
      },
    };
  });
}

/** The pages whose TypeScript blocks must compile: README.md, docs/*.md and every example's README, as paths from `root`. */
export function docPages(root: string): string[] {
  return [
    'README.md',
    ...readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`),
    ...readdirSync(join(root, 'examples'), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => `examples/${e.name}/README.md`),
  ].filter((page) => existsSync(join(root, page)));
}
