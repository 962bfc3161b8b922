/**
 * Tollgate as its users get it: `npm pack`, the tarball installed into a fresh project (with the peers
 * of the plugins it loads, from npm's cache), then
 * 1. plain `node`, no loader, runs README's embedding example against an Anvil, answering over HTTP and
 *    WebSocket;
 * 2. `tsc --noEmit` on a file importing every public entry point, with the strictest settings;
 * 3. `npx tollgate` works (help, version, config check; the demo and start name what is missing; keys,
 *    usage and start on a Redis store, whose driver is pure JavaScript);
 * 4. the tarball holds no tests or benchmarks, and holds the LICENSE.
 * Also: every installed runtime package accepts the Node versions Tollgate declares.
 */
import t from 'tap';
import { execFile, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import semver from 'semver';
import WebSocket from 'ws';
import { startAnvil } from '@tollgate/devnet';
import { startServing } from './helpers/example-process.js';
import { startRedisServer } from './helpers/redis-server.js';

// Commands run as a user's would: without the loaders tap puts into NODE_OPTIONS for its own children.
const { NODE_OPTIONS: _tapLoaders, ...userEnv } = process.env;
const execFileAsync = promisify(execFile);
const run = (file: string, args: readonly string[], options: { cwd: string; maxBuffer?: number }): Promise<{ stdout: string; stderr: string }> =>
  execFileAsync(file, args, { ...options, env: userEnv, encoding: 'utf8' });
const root = fileURLToPath(new URL('..', import.meta.url));
const rootPackage = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string; engines: { node: string }; peerDependencies: Record<string, string> };
const installed = (name: string): string => (JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;

// Packing builds the package, then npm installs it and tsc checks it: about 30 s on a quiet machine, but
// over two minutes (the suite's per-file limit) on two busy cores, so this file gets more.
t.setTimeout(360_000);
const work = await mkdtemp(join(tmpdir(), 'tollgate-consumer-'));
t.teardown(() => rm(work, { recursive: true, force: true }));
const project = join(work, 'app');

// The packages a consumer adds beside tollgate to use every entry point from TypeScript: the drivers of
// the plugins (not better-sqlite3, which compiles from source, and no chart.js: a browser file), the
// compiler and Node's types, and no other `@types/*` package: the declarations carry what their public
// signatures need. Same versions as this repository, so npm's cache serves them.
const peers = Object.keys(rootPackage.peerDependencies).filter((name) => name !== 'better-sqlite3' && name !== 'chart.js');
const extras = [...peers, '@types/node', 'typescript'];

const { stdout: packed } = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: root, maxBuffer: 32 * 1024 * 1024 });
const pack = (JSON.parse(packed) as Array<{ filename: string; files: Array<{ path: string }> }>)[0]!;
const tarball = join(work, pack.filename);

await writeFile(join(work, 'package.json'), '{}\n');
await mkdir(project, { recursive: true });
await writeFile(join(project, 'package.json'), `${JSON.stringify({ name: 'consumer', private: true, type: 'module' }, null, 2)}\n`);
await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball, ...extras.map((name) => `${name}@${installed(name)}`)], { cwd: project, maxBuffer: 32 * 1024 * 1024 });

t.test('the tarball holds the build, the LICENSE and no tests or benchmarks', async (t) => {
  const paths = pack.files.map((f) => f.path);
  t.ok(paths.includes('LICENSE'), 'LICENSE');
  t.ok(paths.includes('dist/core/index.js') && paths.includes('dist/core/index.d.ts'), 'the core, compiled, with declarations');
  t.ok(paths.includes('dist/examples/gateway/main.js'), 'the command');
  t.same(paths.filter((p) => /(^|\/)(test|tests|bench)\//.test(p) || /\.test\.[cm]?[jt]s$/.test(p)), [], 'no tests or benchmarks');
  t.same(paths.filter((p) => p.endsWith('.ts') && !p.endsWith('.d.ts')), [], 'no TypeScript sources');
});

t.test('installing tollgate downloads none of the devnet, and every runtime package accepts the declared Node versions', async (t) => {
  const top = readdirSync(join(project, 'node_modules'));
  for (const heavy of ['@foundry-rs', 'litesvm', '@helia', '@tollgate', 'tsx', 'ajv-formats']) t.notOk(top.includes(heavy), `no ${heavy}`);
  const { stdout } = await run('npm', ['ls', '--omit=dev', '--all', '--parseable', '--long'], { cwd: project, maxBuffer: 32 * 1024 * 1024 }).catch((e: { stdout: string }) => e);
  const refusing: string[] = [];
  for (const line of stdout.split('\n').slice(1)) {
    const dir = line.split(':')[0]!;
    if (dir === '') continue;
    const meta = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name: string; engines?: { node?: string } };
    const range = meta.engines?.node;
    if (range !== undefined && !semver.subset(rootPackage.engines.node, range)) refusing.push(`${meta.name} wants node ${range}`);
  }
  t.same(refusing, [], `every installed package accepts node ${rootPackage.engines.node}`);
});

t.test('plain node runs README\'s embedding example against Anvil, over HTTP and WebSocket', async (t) => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const example = /```js\n(\/\/ main\.mjs\n[\s\S]*?)```/.exec(readme)?.[1];
  t.ok(example, 'README has the main.mjs example');
  await writeFile(join(project, 'main.mjs'), example!);
  const anvil = await startAnvil();
  t.teardown(() => anvil.stop());
  const app = await startServing('main.mjs', project, process.execPath, ['main.mjs'], { NODE_OPTIONS: '', ETH_NODE: anvil.url, TOLLGATE_KEY: 'consumer-key-0001' });
  t.teardown(() => app.stop());
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] });
  const res = await fetch(`${app.origin}/rpc/eth/v3/consumer-key-0001`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  t.equal(res.status, 200);
  t.same(await res.json(), { jsonrpc: '2.0', id: 1, result: '0x7a69' }, 'eth_chainId over HTTP');
  const ws = new WebSocket(`${app.origin.replace('http', 'ws')}/rpc/eth/ws/v3/consumer-key-0001`);
  const answer = await new Promise<unknown>((resolve, reject) => {
    ws.once('error', reject);
    ws.once('open', () => ws.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'eth_blockNumber', params: [] })));
    ws.once('message', (data) => resolve(JSON.parse(String(data))));
  });
  ws.close();
  t.match(answer, { jsonrpc: '2.0', id: 2, result: /^0x[0-9a-f]+$/ }, 'eth_blockNumber over WebSocket');
  const unknownRoute = await fetch(`${app.origin}/elsewhere`);
  t.equal(unknownRoute.status, 404, 'other routes reach the server\'s own handler');
  t.equal(await app.stop(), 0, 'SIGTERM stops it cleanly');
});

t.test('strict TypeScript accepts every public entry point', async (t) => {
  const plugins = readdirSync(join(root, 'plugins'), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort();
  const lines = [
    "import * as core from 'tollgate';",
    ...plugins.map((name, i) => `import * as plugin${i} from 'tollgate/plugins/${name}';`),
    "import type { GatewayConfigInput, TollgatePlugin } from 'tollgate';",
    "const config: GatewayConfigInput = { networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: 'http://127.0.0.1:8545' }] }] };",
    'export const plugins: TollgatePlugin[] = [];',
    `export const modules = [core, ${plugins.map((_, i) => `plugin${i}`).join(', ')}] as const;`,
    'export { config };',
    '',
  ];
  await writeFile(join(project, 'entry-points.ts'), lines.join('\n'));
  await writeFile(join(project, 'tsconfig.json'), JSON.stringify({
    compilerOptions: {
      target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, exactOptionalPropertyTypes: true,
      noPropertyAccessFromIndexSignature: true, noUncheckedIndexedAccess: true, skipLibCheck: false, noEmit: true, types: ['node'],
    },
    files: ['entry-points.ts'],
  }, null, 2));
  const result = await run(process.execPath, [join(project, 'node_modules/typescript/bin/tsc'), '-p', project], { cwd: project }).then(
    () => ({ code: 0, out: '' }),
    (e: { code: number; stdout: string }) => ({ code: e.code, out: e.stdout }),
  );
  t.equal(result.code, 0, `tsc: ${result.out}`);
  t.same(readdirSync(join(project, 'node_modules/@types')), ['node'], 'with no @types package but Node\'s (none for ws or better-sqlite3)');
  t.equal(plugins.length >= 14, true, `every plugin (${plugins.join(', ')})`);
});

/** Runs `npx tollgate ...` in the consumer project. */
function tollgate(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn('npx', ['--no-install', 'tollgate', ...args], { cwd: project, env: { ...userEnv, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c));
  child.stderr.on('data', (c: Buffer) => (stderr += c));
  // npx's own warnings (about this machine's npm configuration) are not the command's output.
  const own = (text: string): string => text.split('\n').filter((line) => !line.startsWith('npm warn')).join('\n');
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr: own(stderr) })));
}

t.test('npx tollgate from the installed package', async (t) => {
  const help = await tollgate(['--help']);
  t.equal(help.code, 0);
  for (const command of ['start', 'demo', 'keys', 'usage', 'config check']) t.match(help.stdout, `tollgate ${command}`, `--help shows ${command}`);
  const version = await tollgate(['--version']);
  t.equal(version.stdout, `${rootPackage.version}\n`, '--version');

  await writeFile(join(project, 'gateway.yaml'), "keys:\n  - { key: consumer-key-0001, secret: not-shown-anywhere-0001, plan: growth }\nnetworks:\n  - name: eth\n    families: [evm]\n    upstreams:\n      - url: https://user:hunter2@node.example/v3/0123456789abcdef0123\n");
  const check = await tollgate(['config', 'check', 'gateway.yaml']);
  t.equal(check.code, 0, check.stderr);
  t.match(check.stdout, /name: eth/, 'prints the resolved configuration');
  t.match(check.stdout, /maxBatchSize: \d+/, 'with the defaults filled in');
  for (const secret of ['consumer-key-0001', 'not-shown-anywhere-0001', 'hunter2', '0123456789abcdef0123']) t.notMatch(check.stdout, secret, `${secret} is masked`);

  const demo = await tollgate(['demo', '--port', '0']);
  t.equal(demo.code, 1);
  t.equal(demo.stderr.trim().split('\n').length, 1, `one line: ${demo.stderr}`);
  t.match(demo.stderr, /npm install .*@tollgate\/devnet/, 'the demo names the devnet package');
  t.match(demo.stderr, /better-sqlite3/, 'and the store driver this project lacks');

  const start = await tollgate(['start', '--config', 'gateway.yaml', '--port', '0']);
  t.equal(start.code, 1);
  t.equal(start.stderr.trim(), 'tollgate: the gateway needs packages that are not installed: npm install better-sqlite3', 'start names what is missing, in one line');
});

t.test('keys, usage and start from the installed package, on a Redis store', async (t) => {
  const redis = await startRedisServer();
  t.teardown(() => redis.stop());
  const anvil = await startAnvil();
  t.teardown(() => anvil.stop());

  await writeFile(join(project, 'redis-gateway.yaml'), `networks:\n  - name: eth\n    families: [evm]\n    upstreams:\n      - url: ${anvil.url}\n`);
  // The store commands work for the gateway its configuration describes: the same --config (and --redis) as start.
  const created = await tollgate(['keys', 'create', '--plan', 'growth', '--id', 'consumer', '--config', 'redis-gateway.yaml', '--redis', redis.url, '--json']);
  t.equal(created.code, 0, created.stderr);
  const { apiKey } = JSON.parse(created.stdout) as { apiKey: string };
  t.match(created.stderr, `store: Redis at 127.0.0.1:${redis.port}; config: redis-gateway.yaml`, 'it says which store and configuration it used');
  const listed = await tollgate(['keys', 'list', '--config', 'redis-gateway.yaml', '--redis', redis.url, '--json']);
  t.equal(listed.code, 0, listed.stderr);
  t.ok((JSON.parse(listed.stdout) as { keys: Array<{ id: string }> }).keys.some((key) => key.id === 'consumer'), 'keys list shows the new key');

  const command = join(project, 'node_modules', '.bin', 'tollgate');
  const gateway = await startServing('tollgate start', project, process.execPath, [command, 'start', '--config', 'redis-gateway.yaml', '--redis', redis.url, '--port', '0'], { NODE_OPTIONS: '' });
  t.teardown(() => gateway.stop());
  const call = (): Promise<Response> =>
    fetch(`${gateway.origin}/eth/v3/${apiKey}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }) });
  const answered = await call();
  t.same(await answered.json(), { jsonrpc: '2.0', id: 1, result: '0x7a69' }, 'the created key answers');
  const revoked = await tollgate(['keys', 'revoke', 'consumer', '--config', 'redis-gateway.yaml', '--redis', redis.url]);
  t.equal(revoked.code, 0, revoked.stderr);
  t.equal((await call()).status, 401, 'the revoked key is refused');
  t.equal(await gateway.stop(), 0, 'SIGTERM stops it cleanly');

  const usage = await tollgate(['usage', 'consumer', '--config', 'redis-gateway.yaml', '--redis', redis.url, '--json']);
  t.equal(usage.code, 0, usage.stderr);
  const day = (JSON.parse(usage.stdout) as { days: Array<{ methods: Record<string, { calls: number }>; total: { calls: number } }> }).days[0];
  t.equal(day?.methods['eth_chainId']?.calls, 1, 'usage shows the one call that was answered');
});
