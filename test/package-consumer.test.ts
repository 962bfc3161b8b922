/**
 * Tollgate as its users get it: `npm pack`, the tarball installed into a fresh project (with the peers
 * of the plugins it loads, from npm's cache), then
 * 1. plain `node`, no loader, runs README's embedding example against an Anvil, answering over HTTP and
 *    WebSocket;
 * 2. `tsc --noEmit` on a file importing every public entry point (the root, the entries by audience and
 *    every plugin), with the strictest settings;
 * 3. `npx tollgate` works (help, version, config check; the demo and start name what is missing; keys,
 *    usage and start on a Redis store, whose driver is pure JavaScript);
 * 4. the tarball holds no tests, benchmarks or source maps, and holds the LICENSE, the guides and the
 *    READMEs, every relative link of which resolves inside the package;
 * 5. every TypeScript block of the docs and every example compile against the packed packages
 *    (tollgate and @tollgate/devnet), strict and NodeNext, the packages' declarations checked.
 * Also: every installed runtime package accepts the Node versions Tollgate declares.
 */
import { userEnv as userEnvOf } from './helpers/user-env.js';
import t from 'tap';
import { STRICT_USER_OPTIONS } from './helpers/strict-compiler-options.js';
import { execFile, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import semver from 'semver';
import ts from 'typescript';
import WebSocket from 'ws';
import { startAnvil } from '@tollgate/devnet';
import { docBlocks, docPages } from './helpers/doc-blocks.js';
import { startServing } from './helpers/example-process.js';
import { deadLinks, relativeLinks } from './helpers/markdown-links.js';
import { startRedisServer } from './helpers/redis-server.js';

// Commands run as a user's would: without the loaders tap puts into NODE_OPTIONS for its own children.
const userEnv = userEnvOf();
const execFileAsync = promisify(execFile);
const run = (file: string, args: readonly string[], options: { cwd: string; maxBuffer?: number }): Promise<{ stdout: string; stderr: string }> =>
  execFileAsync(file, args, { ...options, env: userEnv, encoding: 'utf8' });
const root = fileURLToPath(new URL('..', import.meta.url));
const rootPackage = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string; engines: { node: string }; peerDependencies: Record<string, string>; exports: Record<string, unknown> };
const installed = (name: string): string => (JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;

// Packing builds the package, then npm installs it twice and tsc checks it: about two minutes on a quiet
// machine, five on two busy cores, over the suite's per-file limit, so this file gets more.
t.setTimeout(600_000);
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

// A second project for what the docs and examples import beside tollgate: the devnet (packed from
// packages/devnet as it would be published), the frameworks of the embedding examples, the clients (kubo-rpc-client for the file-storage guide) and
// the test runner of the guides, and the types of ws. Only compiled, so no install scripts run. Both
// projects install at once: most of an install is waiting.
const docsApp = join(work, 'docs-app');
const { stdout: devnetPacked } = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: join(root, 'packages/devnet'), maxBuffer: 32 * 1024 * 1024 });
const devnetTarball = join(work, (JSON.parse(devnetPacked) as Array<{ filename: string }>)[0]!.filename);
const docsExtras = ['express', '@types/express', 'fastify', 'viem', '@solana/web3.js', 'tap', '@types/ws', 'kubo-rpc-client'];

await writeFile(join(work, 'package.json'), '{}\n');
for (const [dir, name] of [[project, 'consumer'], [docsApp, 'docs-consumer']] as const) {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'package.json'), `${JSON.stringify({ name, private: true, type: 'module' }, null, 2)}\n`);
}
await Promise.all([
  run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball, ...extras.map((name) => `${name}@${installed(name)}`)], { cwd: project, maxBuffer: 32 * 1024 * 1024 }),
  run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts', tarball, devnetTarball, ...[...extras, ...docsExtras].map((name) => `${name}@${installed(name)}`)], { cwd: docsApp, maxBuffer: 32 * 1024 * 1024 }),
]);

t.test('the tarball holds the build, the LICENSE and no tests or benchmarks', async (t) => {
  const paths = pack.files.map((f) => f.path);
  t.ok(paths.includes('LICENSE'), 'LICENSE');
  t.ok(paths.includes('dist/core/index.js') && paths.includes('dist/core/index.d.ts'), 'the core, compiled, with declarations');
  t.ok(paths.includes('dist/examples/gateway/main.js'), 'the command');
  t.same(paths.filter((p) => /(^|\/)(test|tests|bench)\//.test(p) || /\.test\.[cm]?[jt]s$/.test(p)), [], 'no tests or benchmarks');
  t.same(paths.filter((p) => p.endsWith('.ts') && !p.endsWith('.d.ts')), [], 'no TypeScript sources');
});

t.test('the tarball holds the guides, and every relative link of its pages resolves to a file it holds', async (t) => {
  const paths = pack.files.map((f) => f.path);
  const guides = readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`);
  t.same(guides.filter((page) => !paths.includes(page)), [], `docs/*.md (${guides.length} guides)`);
  const plugins = readdirSync(join(root, 'plugins'), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => `plugins/${d.name}/README.md`);
  t.same(plugins.filter((page) => !paths.includes(page)), [], 'every plugin\'s README');
  t.ok(paths.includes('examples/gateway/README.md'), 'the command\'s README');
  const pages = paths.filter((p) => p.endsWith('.md'));
  const links = pages.flatMap((page) => relativeLinks(page, readFileSync(join(project, 'node_modules/tollgate', page), 'utf8')));
  t.ok(links.length >= 100, `the pages link to each other (${links.length} relative links in ${pages.length} pages)`);
  t.same(deadLinks(links, paths).map((l) => `${l.page}: ${l.link}`), [], 'every relative link names a file of the package');
});

t.test('the build ships no source maps: stack frames name the JavaScript files the package holds', async (t) => {
  // tsc's output is close to the TypeScript it comes from, comments included; source maps would name
  // .ts files that are not shipped, and with their sources inlined would double the package's size.
  const paths = pack.files.map((f) => f.path);
  t.same(paths.filter((p) => p.endsWith('.map')), [], 'no .map files');
  const scripts = paths.filter((p) => p.endsWith('.js'));
  t.ok(scripts.length > 100, `${scripts.length} JavaScript files`);
  const mapped = scripts.filter((p) => readFileSync(join(project, 'node_modules/tollgate', p), 'utf8').includes('//# sourceMappingURL='));
  t.same(mapped, [], 'no inline source map');
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
  // The entries by audience (`tollgate/plugin`, `tollgate/family`...): every subpath of `exports` but the plugins'.
  const entries = Object.keys(rootPackage.exports).filter((subpath) => subpath.startsWith('./') && !subpath.includes('*') && !subpath.endsWith('.json')).map((subpath) => `tollgate/${subpath.slice(2)}`);
  const lines = [
    "import * as core from 'tollgate';",
    ...entries.map((entry, i) => `import * as entry${i} from '${entry}';`),
    ...plugins.map((name, i) => `import * as plugin${i} from 'tollgate/plugins/${name}';`),
    "import type { GatewayConfigInput, TollgatePlugin } from 'tollgate';",
    "const config: GatewayConfigInput = { networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: 'http://127.0.0.1:8545' }] }] };",
    'export const plugins: TollgatePlugin[] = [];',
    `export const modules = [core, ${entries.map((_, i) => `entry${i}`).join(', ')}, ${plugins.map((_, i) => `plugin${i}`).join(', ')}] as const;`,
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
  t.ok(entries.includes('tollgate/plugin') && entries.includes('tollgate/family'), `every entry by audience (${entries.join(', ')})`);
});

t.test('every TypeScript block of the docs and every example compiles against the packed packages', async (t) => {
  // Each block a module of its own, as in test/docs-typescript.test.ts; each example's files in a folder
  // named as in the repository, so that an example README's `./gateway.js` is the example's own file.
  const blocks = docPages(root).flatMap((page) => docBlocks(page, readFileSync(join(root, page), 'utf8'), join(docsApp, page, '..')));
  const files = blocks.flatMap((block) => block.files(join(docsApp, 'blocks')));
  const examples = readdirSync(join(root, 'examples'), { withFileTypes: true }).filter((d) => d.isDirectory() && d.name !== 'gateway').map((d) => d.name);
  for (const example of examples) {
    for (const name of readdirSync(join(root, 'examples', example)).filter((n) => n.endsWith('.ts') && !n.endsWith('.test.ts'))) {
      files.push({ path: join(docsApp, 'examples', example, name), text: readFileSync(join(root, 'examples', example, name), 'utf8'), origin: `examples/${example}/${name}`, offset: 0 });
    }
  }
  for (const file of files) {
    await mkdir(join(file.path, '..'), { recursive: true });
    await writeFile(file.path, file.text);
  }
  t.ok(blocks.length >= 30, `the pages hold TypeScript blocks (${blocks.length})`);
  t.ok(examples.length >= 5 && files.some((f) => f.origin === 'examples/custom-plugin/server.ts'), `every example (${examples.join(', ')})`);

  // One program for everything, checked as a strict user project would be: NodeNext, and the packages'
  // declarations checked too (skipLibCheck off).
  const program = ts.createProgram(files.map((f) => f.path), {
    ...STRICT_USER_OPTIONS,
    typeRoots: [join(docsApp, 'node_modules/@types')],
    skipLibCheck: false,
  });
  // The files checked: the blocks, the examples, and the declarations of the two packages. The other
  // packages' declarations are not this project's to answer for (some, such as ox's, @solana/keys' and
  // @libp2p's, name Web Crypto and DOM types that a Node project's lib does not have), and checking them
  // all would take minutes.
  const checked = program.getSourceFiles().filter((f) => files.some((file) => file.path === f.fileName) || /\/node_modules\/(tollgate|@tollgate\/devnet)\//.test(f.fileName));
  const diagnostics = [
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...checked.flatMap((f) => [...program.getSyntacticDiagnostics(f), ...program.getSemanticDiagnostics(f)]),
  ];
  const problems = new Map<string, string[]>();
  for (const d of diagnostics) {
    const file = d.file === undefined ? undefined : files.find((f) => f.path === d.file!.fileName);
    const where = file?.origin ?? (d.file === undefined ? 'the program' : relative(docsApp, d.file.fileName));
    const line = d.file === undefined ? 0 : d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1 - (file?.offset ?? 0);
    problems.set(where, [...(problems.get(where) ?? []), `line ${line}: TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`]);
  }
  for (const file of new Set(files.map((f) => f.origin))) t.same(problems.get(file) ?? [], [], `${file} compiles`);
  const declarations = checked.filter((f) => f.fileName.endsWith('.d.ts'));
  t.ok(declarations.some((f) => f.fileName.endsWith('node_modules/tollgate/dist/core/index.d.ts')), 'tollgate resolves to the installed package');
  t.ok(declarations.some((f) => f.fileName.endsWith('node_modules/@tollgate/devnet/dist/index.d.ts')), 'the devnet too');
  t.same([...problems].filter(([where]) => !files.some((f) => f.origin === where)), [], `no problem in the program or in the ${declarations.length} declaration files of tollgate and the devnet`);
});

t.test('the custom-plugin example, built and shipped as its README says, loads from node_modules in plain node', async (t) => {
  // Built with the example's own package.json and tsconfig.json, then laid into node_modules as
  // `npm install` would lay its tarball (`files`: dist).
  const source = join(docsApp, 'geth-extras-source');
  await mkdir(source, { recursive: true });
  for (const name of ['index.ts', 'geth-extras.ts', 'package.json', 'tsconfig.json']) await writeFile(join(source, name), readFileSync(join(root, 'examples/custom-plugin', name)));
  const built = await run(process.execPath, [join(docsApp, 'node_modules/typescript/bin/tsc'), '-p', source], { cwd: source }).then(
    () => ({ code: 0, out: '' }),
    (e: { code: number; stdout: string }) => ({ code: e.code, out: e.stdout }),
  );
  t.equal(built.code, 0, `tsc: ${built.out}`);
  const manifest = JSON.parse(readFileSync(join(source, 'package.json'), 'utf8')) as { name: string; files: string[]; exports: Record<string, { types: string; default: string }> };
  t.same(manifest.files, ['dist'], 'it ships dist');
  t.same(manifest.exports['.'], { types: './dist/index.d.ts', default: './dist/index.js' }, 'and exports the compiled entry with its declarations');
  const installedPlugin = join(docsApp, 'node_modules', manifest.name);
  await mkdir(installedPlugin, { recursive: true });
  await cp(join(source, 'dist'), join(installedPlugin, 'dist'), { recursive: true });
  await writeFile(join(installedPlugin, 'package.json'), JSON.stringify(manifest));

  await writeFile(join(docsApp, 'use-plugin.mjs'), [
    "import { firstValueFrom } from 'rxjs';",
    "import { createGateway } from 'tollgate';",
    "import { evmFamily } from 'tollgate/plugins/evm';",
    `import { gethExtrasFamily } from '${manifest.name}';`,
    "const gateway = await createGateway({",
    "  config: { log: { level: 'silent' }, keys: [{ key: 'plugin-user-key-0001', plan: 'growth' }],",
    "    networks: [{ name: 'eth', families: ['evm', 'geth-extras'], upstreams: [{ url: 'http://127.0.0.1:9' }] }] },",
    "  plugins: [evmFamily(), gethExtrasFamily()],",
    "});",
    "const call = (method, params) => firstValueFrom(gateway.handle({ network: 'eth', apiKey: 'plugin-user-key-0001', body: { jsonrpc: '2.0', id: 1, method, params } }));",
    "const answers = [await call('web3_sha3', ['0xabc']), await call('txpool_nothing', [])];",
    "console.log(JSON.stringify(answers.map((a) => JSON.parse(String(a.body)).error.code)));",
    "await gateway.close();",
    '',
  ].join('\n'));
  const { stdout } = await run(process.execPath, ['use-plugin.mjs'], { cwd: docsApp });
  t.same(JSON.parse(stdout), [-32602, -32601], "the family's schema refuses an odd-length web3_sha3 argument, and a method it does not offer is unknown");
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
  const guides = [...help.stdout.matchAll(/node_modules\/tollgate\/docs\/[\w-]+\.md/g)].map((m) => m[0]);
  t.ok(guides.length >= 2, `--help names the guides where the package put them (${guides.join(', ')})`);
  t.same(guides.filter((path) => !existsSync(join(project, path))), [], 'and they are there');
  const version = await tollgate(['--version']);
  t.equal(version.stdout, `${rootPackage.version}\n`, '--version');

  const gatewayYaml = "keys:\n  - { key: consumer-key-0001, secret: not-shown-anywhere-0001, plan: growth }\nnetworks:\n  - name: eth\n    families: [evm]\n    upstreams:\n      - url: https://user:hunter2@node.example/v3/0123456789abcdef0123\n";
  await writeFile(join(project, 'gateway.yaml'), gatewayYaml);
  // This project has the Redis driver, not SQLite's: checked on Redis, the file is valid.
  await writeFile(join(project, 'redis-checked.yaml'), `${gatewayYaml}plugins:\n  ledger-redis: { url: 'redis://127.0.0.1:6379' }\n`);
  const unstartable = await tollgate(['config', 'check', 'gateway.yaml']);
  t.equal(unstartable.code, 1, 'a driver start needs is missing: a problem, as for start');
  t.match(unstartable.stderr, /^tollgate start would refuse gateway\.yaml:\n {2}the gateway needs packages that are not installed: npm install better-sqlite3 /);
  const check = await tollgate(['config', 'check', 'redis-checked.yaml']);
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
