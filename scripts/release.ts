/**
 * Releases `tollgate` and `@tollgate/devnet` together, with one version:
 *
 *   node --import tsx scripts/release.ts <version> [--dry-run] [--skip-tests] [--out <dir>]
 *   npm run release -- <version> [--dry-run] [--skip-tests]
 *
 * 1. sets the version in both package.json files and the lock (tollgate's, the devnet's, the devnet's
 *    peer range on tollgate, and the repository's dependency on the devnet); `--dry-run` leaves the
 *    repository's files as they are and gives the version to the packed packages only;
 * 2. builds both (`npm run build`);
 * 3. runs the type checker and the tests, unless `--skip-tests`;
 * 4. packs both into `release/` (or `--out`), each with the package.json users get: no scripts, no
 *    devDependencies, workspaces or allowScripts, and exports without the repository's `tollgate-source`
 *    condition, so nothing of the repository runs at a user's install.
 *
 * Publishing stays a deliberate step: it prints the two `npm publish` commands, tollgate's first (the
 * devnet names it as a peer). docs/releasing.md has the whole procedure.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import semver from 'semver';

/** What package.json holds, as far as a release reads and changes it. */
interface Manifest {
  name: string;
  version: string;
  exports?: unknown;
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  [field: string]: unknown;
}

/** One package of the repository: its folder, from the root. */
const PACKAGES = ['.', 'packages/devnet'] as const;
const DEVNET = '@tollgate/devnet';
const TOLLGATE = 'tollgate';
/** Fields that serve only the repository: its scripts, tools and workspace. */
const REPOSITORY_ONLY = ['scripts', 'devDependencies', 'workspaces', 'allowScripts'] as const;
/** The export condition that points the repository's own tests and tools at the TypeScript sources. */
const SOURCE_CONDITION = 'tollgate-source';

const root = fileURLToPath(new URL('..', import.meta.url));

const readJson = <T>(path: string): T => JSON.parse(readFileSync(path, 'utf8')) as T;
const writeJson = (path: string, value: unknown): void => writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);

/** The manifest with the version set everywhere the two packages name it. */
function withVersion(manifest: Manifest, version: string): Manifest {
  const next: Manifest = { ...manifest, version };
  if (next.name === DEVNET && next.peerDependencies?.[TOLLGATE] !== undefined) next.peerDependencies = { ...next.peerDependencies, [TOLLGATE]: `^${version}` };
  for (const field of ['dependencies', 'devDependencies'] as const) {
    if (next[field]?.[DEVNET] !== undefined) next[field] = { ...next[field], [DEVNET]: version };
  }
  return next;
}

/** `exports` without the repository's source condition, at any depth. */
function withoutSourceCondition(exports: unknown): unknown {
  if (typeof exports !== 'object' || exports === null || Array.isArray(exports)) return exports;
  return Object.fromEntries(Object.entries(exports).filter(([key]) => key !== SOURCE_CONDITION).map(([key, value]) => [key, withoutSourceCondition(value)]));
}

/** The package.json users get: the version set, and nothing that serves only the repository. */
export function publishedManifest(manifest: Manifest, version: string): Manifest {
  const published: Manifest = withVersion(manifest, version);
  for (const field of REPOSITORY_ONLY) delete published[field];
  if (published.exports !== undefined) published.exports = withoutSourceCondition(published.exports);
  return published;
}

/** Writes the version into both package.json files and the lock, as `npm version` would for each. */
function setRepositoryVersion(version: string): void {
  for (const folder of PACKAGES) {
    const path = join(root, folder, 'package.json');
    writeJson(path, withVersion(readJson<Manifest>(path), version));
  }
  const lockPath = join(root, 'package-lock.json');
  const lock = readJson<{ version?: string; packages: Record<string, Manifest> }>(lockPath);
  lock.version = version;
  for (const folder of PACKAGES) {
    const key = folder === '.' ? '' : folder;
    if (lock.packages[key] !== undefined) lock.packages[key] = withVersion(lock.packages[key], version);
  }
  writeJson(lockPath, lock);
}

/** Runs a command of the release in the repository, its output shown. */
function step(title: string, command: string, args: readonly string[]): void {
  console.log(`\n== ${title}: ${command} ${args.join(' ')}`);
  execFileSync(command, args, { cwd: root, stdio: 'inherit' });
}

/**
 * Packs one package with its published manifest: the files `npm pack` would take (its `files` list),
 * copied beside the clean package.json, packed from there. Returns the tarball's path.
 */
function pack(folder: string, version: string, out: string): string {
  const dir = join(root, folder);
  const manifest = readJson<Manifest>(join(dir, 'package.json'));
  const listing = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: dir, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const files = (JSON.parse(listing) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((f) => f.path);
  const stage = mkdtempSync(join(tmpdir(), 'tollgate-release-'));
  try {
    for (const file of files) {
      if (file === 'package.json') continue;
      mkdirSync(dirname(join(stage, file)), { recursive: true });
      copyFileSync(join(dir, file), join(stage, file));
    }
    writeJson(join(stage, 'package.json'), publishedManifest(manifest, version));
    const packed = execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', out], { cwd: stage, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    return join(out, (JSON.parse(packed) as Array<{ filename: string }>)[0]!.filename);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/** The command line: a version, then the flags. */
function main(argv: readonly string[]): void {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: { 'dry-run': { type: 'boolean', default: false }, 'skip-tests': { type: 'boolean', default: false }, out: { type: 'string', default: 'release' } },
  });
  const version = positionals[0];
  if (positionals.length !== 1 || version === undefined || semver.valid(version) !== version) {
    console.error('usage: npm run release -- <version> [--dry-run] [--skip-tests] [--out <dir>]   (version: semver, such as 0.2.0 or 0.2.0-rc.1)');
    process.exit(2);
  }
  const out = resolve(root, values.out);
  if (values['dry-run']) console.log(`Dry run: the repository's package.json files keep their version; the packages get ${version}.`);
  else setRepositoryVersion(version);
  step('build', 'npm', ['run', 'build']);
  if (!values['skip-tests']) {
    step('type check', 'npm', ['run', 'typecheck']);
    step('tests', 'npm', ['test']);
  }
  mkdirSync(out, { recursive: true });
  const tarballs = PACKAGES.map((folder) => pack(folder, version, out));
  console.log(`\nPacked ${version}:\n${tarballs.map((t) => `  ${t}`).join('\n')}\n\nTo publish, tollgate first:\n${tarballs.map((t) => `  npm publish ${t}`).join('\n')}`);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main(process.argv.slice(2));
