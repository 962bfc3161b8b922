/**
 * `tollgate config check` checks what `tollgate start` checks before it listens (every plugin's
 * settings, the families the networks name, sections no plugin reads) and reports every problem at
 * once; it takes the file as an argument, as `--config` or from `TOLLGATE_CONFIG`. `start` reports every
 * problem at once too, and so does the core's `checkGateway`.
 */
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkGateway, ConfigError, createGateway, PluginError } from '../core/index.js';
import { admin } from '../plugins/admin/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { metrics } from '../plugins/metrics/index.js';
import { TSX_NODE_ARGS } from './helpers/tsx-node-args.js';

const dir = await mkdtemp(join(tmpdir(), 'tollgate-config-check-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
const main = new URL('../examples/gateway/main.ts', import.meta.url).pathname;

function run(args: string[], env: Record<string, string | undefined> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...TSX_NODE_ARGS, main, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TOLLGATE_CONFIG: undefined, TOLLGATE_ADMIN_TOKEN: undefined, ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c));
  child.stderr.on('data', (c: Buffer) => (stderr += c));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

// The file of the report: a misspelled plugin setting, a path without its slash, an unknown family.
const bad = join(dir, 'bad.yaml');
await writeFile(bad, 'networks:\n  - name: eth\n    families: [evm, evmm]\n    upstreams:\n      - url: http://127.0.0.1:8545\nplugins:\n  admin:\n    tokn: a-long-enough-admin-token-0001\n  metrics:\n    path: metrics\n  admn: {}\n');
const problems = [
  'plugins.admin.tokn: is not a known field',
  'plugins.metrics.path: must match pattern "^/"',
  'networks[0].families[1]: no plugin provides network family "evmm" (provided: evm, polygon, solana, ipfs)',
];

t.test('config check --config: every problem start would find, at once', async (t) => {
  const checked = await run(['config', 'check', '--config', bad]);
  t.equal(checked.code, 1, 'invalid');
  t.equal(checked.stdout, '', 'not printed as valid');
  t.same(checked.stderr.trim().split('\n'), [
    `invalid configuration in ${bad}:`,
    ...problems.map((line) => `  ${line}`),
    '  plugins.admn: no plugin of the gateway is named "admn" (its plugins: access-log, admin, cache, cache-redis, evm, health, http, ipfs, ledger-redis, ledger-sqlite, metrics, otel, polygon, security, solana, ws)',
  ]);
  const fromEnv = await run(['config', 'check'], { TOLLGATE_CONFIG: bad });
  t.equal(fromEnv.code, 1);
  t.equal(fromEnv.stderr, checked.stderr, 'TOLLGATE_CONFIG names the same file');
  t.equal((await run(['config', 'check'])).code, 2, 'no file at all: bad usage');
  t.equal((await run(['config', 'check', bad, '--config', join(dir, 'other.yaml')])).code, 2, 'two different files: bad usage');
});

t.test('start reports every problem at once too', async (t) => {
  const started = await run(['start', '--config', bad, '--port', '0', '--data-dir', dir]);
  t.equal(started.code, 1);
  t.same(started.stderr.trim().split('\n'), ['invalid configuration:', ...problems.map((line) => `  ${line}`)]);
});

t.test('createGateway and checkGateway name every plugin problem', async (t) => {
  const config = { networks: [{ name: 'eth', families: ['evm', 'evmm'], upstreams: [{ url: 'http://127.0.0.1:8545' }] }], plugins: { admin: { tokn: 'x' }, metrics: { path: 'metrics' } } };
  const plugins = [admin(), metrics(), evmFamily()];
  const expected = [problems[0], problems[1], 'networks[0].families[1]: no plugin provides network family "evmm" (provided: evm)'];
  t.same(checkGateway({ config, plugins }), expected);
  const error = await createGateway({ config, plugins }).then(() => undefined, (e: unknown) => e);
  t.type(error, ConfigError);
  t.same((error as ConfigError).problems, expected);
  t.same(checkGateway({ config: { ...config, networks: [{ ...config.networks[0]!, families: ['evm'] }], plugins: {} }, plugins }), [], 'a good one has none');
  t.same(checkGateway({ config: { networks: [] }, plugins }), ['networks: must NOT have fewer than 1 items'], 'schema problems come first');
});

t.test("a plugin that fails to start is named by its own name in PluginError.plugin", async (t) => {
  const failing = { name: 'flaky', register: () => undefined, start: () => { throw new Error('cannot open its file'); } };
  const error = await createGateway({ config: { networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: 'http://127.0.0.1:8545' }] }] }, plugins: [evmFamily(), failing] }).then(() => undefined, (e: unknown) => e);
  t.type(error, PluginError);
  t.equal((error as PluginError).code, 'PLUGIN_START_FAILED');
  t.equal((error as PluginError).plugin, 'flaky', "the plugin's name, not a phrase");
  t.equal((error as PluginError).message, 'plugin "flaky" failed to start: cannot open its file');
});
