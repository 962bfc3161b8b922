/**
 * scripts/release.ts, run as a maintainer would (`--dry-run --skip-tests`, into a folder of its own): both
 * packages come out with one version and the package.json users get (no scripts, no devDependencies or
 * workspaces, exports without the repository's source condition), and installed together into a fresh
 * project they print no install-script warning of theirs and `npx tollgate --version` prints the version.
 * The repository's own package.json files keep their version (a dry run).
 */
import { userEnv as userEnvOf } from './helpers/user-env.js';
import t from 'tap';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

// Commands run as a maintainer's would: without the loaders tap puts into NODE_OPTIONS for its own children.
const userEnv = userEnvOf();
const execFileAsync = promisify(execFile);
const run = (file: string, args: readonly string[], cwd: string): Promise<{ stdout: string; stderr: string }> =>
  execFileAsync(file, args, { cwd, env: userEnv, encoding: 'utf8', maxBuffer: 32 * 1024 * 1024 });

// Building (a no-op when dist/ is current), packing both packages and installing the devnet's dependencies.
t.setTimeout(300_000);
const root = fileURLToPath(new URL('..', import.meta.url));
const manifestsBefore = ['package.json', 'packages/devnet/package.json', 'package-lock.json'].map((path) => readFileSync(join(root, path), 'utf8'));
const work = await mkdtemp(join(tmpdir(), 'tollgate-release-test-'));
t.teardown(() => rm(work, { recursive: true, force: true }));
const out = join(work, 'release');
const version = '9.8.7-rc.1';

const released = await run(process.execPath, ['--import', 'tsx', join(root, 'scripts/release.ts'), version, '--dry-run', '--skip-tests', '--out', out], root);

/** A file of a tarball, as text. */
const fromTarball = async (tarball: string, path: string): Promise<string> => (await run('tar', ['-xzOf', tarball, `package/${path}`], work)).stdout;

interface Published {
  name: string;
  version: string;
  scripts?: unknown;
  devDependencies?: unknown;
  workspaces?: unknown;
  allowScripts?: unknown;
  peerDependencies?: Record<string, string>;
  dependencies?: Record<string, string>;
  repository?: { type: string; url: string; directory?: string };
  homepage?: string;
  bugs?: { url: string };
}

t.test('both packages, one version, packed into the folder given', async (t) => {
  t.same(readdirSync(out).sort(), [`tollgate-${version}.tgz`, `tollgate-devnet-${version}.tgz`]);
  t.match(released.stdout, `npm publish ${join(out, `tollgate-${version}.tgz`)}`, 'it prints how to publish them');
  const after = ['package.json', 'packages/devnet/package.json', 'package-lock.json'].map((path) => readFileSync(join(root, path), 'utf8'));
  t.same(after, manifestsBefore, 'a dry run leaves the repository\'s package.json files and lock as they were');
});

t.test('the published package.json files hold nothing of the repository', async (t) => {
  const tollgate = JSON.parse(await fromTarball(join(out, `tollgate-${version}.tgz`), 'package.json')) as Published;
  const devnet = JSON.parse(await fromTarball(join(out, `tollgate-devnet-${version}.tgz`), 'package.json')) as Published;
  t.equal(tollgate.name, 'tollgate');
  t.equal(devnet.name, '@tollgate/devnet');
  t.equal(tollgate.version, version);
  t.equal(devnet.version, version);
  t.equal(devnet.peerDependencies?.['tollgate'], `^${version}`, 'the devnet wants the tollgate of its release');
  for (const [name, manifest] of [['tollgate', tollgate], ['@tollgate/devnet', devnet]] as const) {
    t.equal(manifest.scripts, undefined, `${name}: no scripts (no prepare, build, test or bench)`);
    t.equal(manifest.devDependencies, undefined, `${name}: no devDependencies`);
    t.equal(manifest.workspaces, undefined, `${name}: no workspaces`);
    t.equal(manifest.allowScripts, undefined, `${name}: no allowScripts`);
    t.notMatch(JSON.stringify(manifest), 'tollgate-source', `${name}: exports without the repository's source condition`);
    t.equal(manifest.repository?.url, 'git+https://github.com/tollgate-gateway/tollgate.git', `${name}: repository`);
    t.equal(manifest.bugs?.url, 'https://github.com/tollgate-gateway/tollgate/issues', `${name}: bugs`);
    t.match(manifest.homepage, /^https:\/\/github\.com\/tollgate-gateway\/tollgate\b/, `${name}: homepage`);
  }
  t.equal(devnet.repository?.directory, 'packages/devnet', 'the devnet names its folder of the repository');
  t.match(await fromTarball(join(out, `tollgate-${version}.tgz`), 'dist/core/index.js'), /createGateway/, 'tollgate holds its build');
  t.match(await fromTarball(join(out, `tollgate-devnet-${version}.tgz`), 'dist/index.js'), /devnet/, 'the devnet holds its build');
});

t.test('installed together into a fresh project: no install script of theirs, and the command knows its version', async (t) => {
  const project = join(work, 'app');
  await mkdir(project, { recursive: true });
  await writeFile(join(project, 'package.json'), `${JSON.stringify({ name: 'release-consumer', private: true, type: 'module' }, null, 2)}\n`);
  const install = await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', join(out, `tollgate-${version}.tgz`), join(out, `tollgate-devnet-${version}.tgz`)], project);
  const output = `${install.stdout}\n${install.stderr}`;
  // npm names every installed package with install scripts it was not told to allow; the devnet's own
  // dependencies (Anvil's binary, native modules) may be among them, tollgate and the devnet may not.
  const ours = output.split('\n').filter((line) => /install-scripts/.test(line) && /\b(tollgate|@tollgate\/devnet)@/.test(line));
  t.same(ours, [], `no install-script warning for tollgate or the devnet:\n${output}`);
  t.notMatch(output, /prepare: /, 'no prepare script anywhere');
  const listed = JSON.parse((await run('npm', ['ls', '--json', 'tollgate', '@tollgate/devnet'], project)).stdout) as { dependencies: Record<string, { version: string }> };
  t.equal(listed.dependencies['tollgate']?.version, version);
  t.equal(listed.dependencies['@tollgate/devnet']?.version, version, 'and the devnet\'s peer range accepts that tollgate');
  const { stdout } = await run('npx', ['--no-install', 'tollgate', '--version'], project);
  t.equal(stdout, `${version}\n`, 'npx tollgate --version');
});
