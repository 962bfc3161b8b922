import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfigFile, resolveConfig } from '../core/index.js';
import { defaultConfig } from '../examples/gateway/default-config.js';
import { operatorPlugins } from '../examples/gateway/operator-plugins.js';
import { applyStoreFlags, storeKind } from '../examples/gateway/store-flags.js';
import { parseCli } from '../examples/gateway/cli.js';
import { runCommand } from '../examples/gateway/store-commands.js';
import { post, rpc } from './helpers/json-rpc.js';
import { startTinyUpstream } from './helpers/tiny-upstream.js';
import { TSX_NODE_ARGS } from './helpers/tsx-node-args.js';

const main = new URL('../examples/gateway/main.ts', import.meta.url).pathname;
const dir = await mkdtemp(join(tmpdir(), 'tollgate-cli-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
const upstream = await startTinyUpstream();
t.teardown(() => upstream.close());
const configFile = join(dir, 'gateway.yaml');
await writeFile(configFile, `networks:\n  - name: eth\n    families: [evm]\n    upstreams:\n      - url: ${upstream.url}\n`);
const env = { ...process.env, TOLLGATE_ADMIN_TOKEN: '', TOLLGATE_REDIS_URL: '', TOLLGATE_DATA_DIR: '' };

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...TSX_NODE_ARGS, main, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c));
  child.stderr.on('data', (c: Buffer) => (stderr += c));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

/** Runs a command in this process, on the same store as the gateway processes. */
async function command(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const cli = parseCli([...args, '--config', configFile, '--data-dir', dir]);
  const config = await loadConfigFile(configFile);
  applyStoreFlags(config, cli, {});
  let stdout = '';
  let stderr = '';
  const code = await runCommand(cli, config, { out: (s) => void (stdout += s), err: (s) => void (stderr += s) });
  return { code, stdout, stderr };
}

async function serve(): Promise<{ child: ChildProcess; url: (key: string) => string; banner: string; stop: () => Promise<number | null> }> {
  const child = spawn(process.execPath, [...TSX_NODE_ARGS, main, 'start', '--config', configFile, '--data-dir', dir, '--port', '0', '--log-level', 'warn'], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let banner = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no banner: ${banner}`)), 60_000);
    child.stdout!.on('data', (c: Buffer) => {
      banner += c;
      if (banner.includes('Press Ctrl+C')) { clearTimeout(timer); resolve(); }
    });
    child.stderr!.on('data', (c: Buffer) => (banner += c));
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`exited with ${code}: ${banner}`)); });
  });
  child.removeAllListeners('exit');
  const origin = /(http:\/\/127\.0\.0\.1:\d+)\/eth\/v3\//.exec(banner)![1]!;
  return {
    child,
    banner,
    url: (key) => `${origin}/eth/v3/${key}`,
    stop: () => new Promise((resolve) => { child.once('exit', (code) => resolve(code)); child.kill('SIGTERM'); }),
  };
}

t.test('npm start keeps keys, balances and usage in SQLite by default', async (t) => {
  const config = resolveConfig(defaultConfig);
  t.equal(storeKind(config), 'sqlite');
  t.same(config.plugins['ledger-sqlite'], { path: '.data/tollgate.db' });
  t.same((await operatorPlugins(config)).map((p) => p.name), ['ledger-sqlite', 'admin', 'metrics', 'access-log', 'health', 'payments'], 'and x402 payments, which the demo offers');
  applyStoreFlags(config, parseCli(['--redis', 'redis://10.0.0.7:6379']));
  t.equal(storeKind(config), 'redis', '--redis switches to Redis');
  t.equal((await operatorPlugins(config))[0]!.name, 'ledger-redis');
  const moved = resolveConfig(defaultConfig);
  applyStoreFlags(moved, {}, { TOLLGATE_DATA_DIR: '/var/lib/tollgate' });
  t.same(moved.plugins['ledger-sqlite'], { path: '/var/lib/tollgate/tollgate.db' }, 'TOLLGATE_DATA_DIR moves the file');
});

t.test('keys and usage commands, against a running gateway, across a restart', async (t) => {
  const created = await run(['keys', 'create', '--plan', 'core', '--id', 'acme', '--label', 'Acme', '--config', configFile, '--data-dir', dir, '--json']);
  t.equal(created.code, 0, created.stderr);
  const { apiKey, secret, key } = JSON.parse(created.stdout) as { apiKey: string; secret: string; key: { id: string; plan: string } };
  t.match(key, { id: 'acme', plan: 'core' });
  t.ok(apiKey && secret, 'the API key and secret are printed once');

  let gateway = await serve();
  t.teardown(() => { gateway.child.kill('SIGKILL'); });
  t.match(gateway.banner, /Store: {5}SQLite .*tollgate\.db/);
  t.match(gateway.banner, /Admin API: off/);
  for (let i = 0; i < 3; i++) t.equal((await post(gateway.url(apiKey), rpc('eth_blockNumber', []))).status, 200, 'the key works');
  t.equal(await gateway.stop(), 0);

  gateway = await serve();
  t.equal((await post(gateway.url(apiKey), rpc('eth_blockNumber', []))).status, 200, 'after a restart too');
  const usage = await command(['usage', 'acme', '--json']);
  t.equal(usage.code, 0, usage.stderr);
  const [today] = (JSON.parse(usage.stdout) as { days: Array<{ balanceUsed: number; methods: Record<string, { calls: number; credits: number }> }> }).days;
  t.equal(today!.balanceUsed, 4 * 80, 'the balance kept the calls made before the restart');
  t.match(today!.methods.eth_blockNumber, { calls: 4, credits: 320 });
  const text = await command(['usage', 'acme']);
  t.match(text.stdout, /acme on \d{4}-\d{2}-\d{2}: 4 calls, 320 credits/);

  // A top-up by hand, into the store the running gateway uses; the same reference twice adds once.
  const topUp = await command(['keys', 'credits', 'acme', '500', 'invoice-1']);
  t.equal(topUp.code, 0, topUp.stderr);
  t.match(topUp.stdout, /Added 500 paid credits to acme/);
  const again = await command(['keys', 'credits', 'acme', '500', 'invoice-1', '--json']);
  t.match(JSON.parse(again.stdout), { id: 'acme', applied: false, balance: { paidRemaining: 500 } });
  t.match((await command(['usage', 'acme'])).stdout, /acme today \(\d{4}-\d{2}-\d{2}\): \d+ of \d+ daily credits left, 500 paid credits left/);
  t.equal((await command(['keys', 'credits', 'acme', '0', 'x'])).code, 2, 'credits must be a positive whole number');

  const listed = await command(['keys', 'list']);
  t.match(listed.stdout, /acme\s+core\s+…\S{4}\s+active\s+Acme/);
  t.notMatch(listed.stdout, apiKey);
  t.equal((await command(['keys', 'plan', 'acme', 'growth'])).code, 0);
  const rotated = await command(['keys', 'rotate', 'acme', '--json']);
  const fresh = (JSON.parse(rotated.stdout) as { apiKey: string }).apiKey;
  t.equal((await post(gateway.url(apiKey), rpc('eth_blockNumber', []))).status, 401, 'a key rotated from the CLI stops working in the running gateway at once');
  t.equal((await post(gateway.url(fresh), rpc('eth_blockNumber', []))).status, 200, 'and its new API key works');
  t.equal((await command(['keys', 'revoke', 'acme'])).code, 0);
  t.equal((await post(gateway.url(fresh), rpc('eth_blockNumber', []))).status, 401, 'a key revoked from the CLI is refused at once');
  t.equal(await gateway.stop(), 0);

  const missing = await command(['keys', 'revoke', 'nobody']);
  t.equal(missing.code, 1);
  t.match(missing.stderr, /no key "nobody"/);
  t.equal((await command(['keys', 'create'])).code, 2, '--plan is required');
  t.equal((await command(['keys', 'explode'])).code, 2);
  t.throws(() => parseCli(['nonsense']), /unknown command "nonsense"/);
});

t.test('keys security: shown, checked, stored, and applied by a running gateway', async (t) => {
  const created = await command(['keys', 'create', '--plan', 'growth', '--id', 'locked', '--json']);
  t.equal(created.code, 0, created.stderr);
  const { apiKey } = JSON.parse(created.stdout) as { apiKey: string };
  t.equal((await command(['keys', 'security', 'locked'])).stdout, '{}\n', 'no settings yet');

  const bad = await command(['keys', 'security', 'locked', '{"origins":["https://x.test/path"],"networks":{"eth":"off"}}']);
  t.equal(bad.code, 1, 'bad settings are refused');
  t.match(bad.stderr, /settings\.security\.origins\[0\]: must be an origin/);
  t.match(bad.stderr, /settings\.security\.networks\.eth: must be true or false/);
  t.equal((await command(['keys', 'security', 'locked', '{not json'])).code, 2, 'not JSON: a usage error');
  t.equal((await command(['keys', 'security'])).code, 2, 'the key id is required');

  const set = await command(['keys', 'security', 'locked', '{"methods":["eth_chainId"]}']);
  t.equal(set.code, 0, set.stderr);
  t.match(set.stdout, /Key locked's security settings apply from its next call on/);
  t.same(JSON.parse((await command(['keys', 'security', 'locked', '--json'])).stdout), { id: 'locked', security: { methods: ['eth_chainId'] } });

  const gateway = await serve();
  t.teardown(() => { gateway.child.kill('SIGKILL'); });
  t.equal((await post(gateway.url(apiKey), rpc('eth_chainId', []))).status, 200, 'a listed method passes');
  const refused = await post(gateway.url(apiKey), rpc('eth_blockNumber', []));
  t.equal(refused.status, 403, 'the bundled gateway enforces the settings set from the CLI');
  t.match(refused.json, { error: { code: -33100, data: { setting: 'methods' } } });
  t.equal((await command(['keys', 'security', 'locked', '{}'])).code, 0, '{} removes them');
  t.equal((await post(gateway.url(apiKey), rpc('eth_blockNumber', []))).status, 200, 'in the running gateway at once');
  t.equal(await gateway.stop(), 0);
  t.equal((await command(['keys', 'security', 'nobody', '{}'])).code, 1, 'an unknown key');
});
