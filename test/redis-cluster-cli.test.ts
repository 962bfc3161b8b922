/**
 * `tollgate start --redis-cluster <nodes>` (and `TOLLGATE_REDIS_CLUSTER`) on a real Redis Cluster; a plain
 * `--redis` URL that is a Cluster node refused at start with one line.
 */
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveConfig } from '../core/index.js';
import { defaultConfig } from '../examples/gateway/default-config.js';
import { applyStoreFlags, storeKind } from '../examples/gateway/store-flags.js';
import { parseCli } from '../examples/gateway/cli.js';
import { runCommand } from '../examples/gateway/store-commands.js';
import { describeTarget } from '../examples/gateway/store-target.js';
import { storeDescription } from '../plugins/ledger-redis/index.js';
import { post, rpc } from './helpers/json-rpc.js';
import { startTinyUpstream } from './helpers/tiny-upstream.js';
import { startRedisCluster } from './helpers/redis-cluster.js';
import { TSX_NODE_ARGS } from './helpers/tsx-node-args.js';

const main = new URL('../examples/gateway/main.ts', import.meta.url).pathname;
const dir = await mkdtemp(join(tmpdir(), 'tollgate-cluster-cli-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
const upstream = await startTinyUpstream();
t.teardown(() => upstream.close());
const cluster = await startRedisCluster();
t.teardown(() => cluster.stop());
const configFile = join(dir, 'gateway.yaml');
await writeFile(configFile, `networks:\n  - name: eth\n    families: [evm]\n    upstreams:\n      - url: ${upstream.url}\n`);
const env = { ...process.env, TOLLGATE_ADMIN_TOKEN: '', TOLLGATE_REDIS_URL: '', TOLLGATE_REDIS_CLUSTER: '', TOLLGATE_DATA_DIR: dir };

t.test('--redis-cluster and TOLLGATE_REDIS_CLUSTER select the cluster store; the flag wins', async (t) => {
  const config = resolveConfig(defaultConfig);
  applyStoreFlags(config, parseCli(['--redis-cluster', '10.0.0.7:7000, 10.0.0.8:7000']), {});
  t.equal(storeKind(config), 'redis');
  t.same(config.plugins['ledger-redis'], { cluster: { nodes: ['10.0.0.7:7000', '10.0.0.8:7000'] } });
  const fromEnv = resolveConfig(defaultConfig);
  applyStoreFlags(fromEnv, {}, { TOLLGATE_REDIS_CLUSTER: '10.0.0.9:7000' });
  t.same(fromEnv.plugins['ledger-redis'], { cluster: { nodes: ['10.0.0.9:7000'] } });
  const both = resolveConfig(defaultConfig);
  applyStoreFlags(both, parseCli(['--redis-cluster', '10.0.0.7:7000']), { TOLLGATE_REDIS_CLUSTER: '10.0.0.9:7000' });
  t.same(both.plugins['ledger-redis'], { cluster: { nodes: ['10.0.0.7:7000'] } }, 'the flag wins over the environment');
  t.throws(() => applyStoreFlags(resolveConfig(defaultConfig), parseCli(['--redis-cluster', ' , ']), {}), /name at least one node/);
});

t.test('tollgate start --redis-cluster serves, charging the cluster; keys commands work on it', async (t) => {
  let stdout = '';
  let stderr = '';
  const created = await runCommand(parseCli(['keys', 'create', '--plan', 'developer', '--id', 'cli-cluster', '--json', '--redis-cluster', cluster.seeds]), (() => {
    const config = resolveConfig({ ...defaultConfig, networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url }] }] });
    applyStoreFlags(config, parseCli(['--redis-cluster', cluster.seeds]), {});
    return config;
  })(), { out: (s) => void (stdout += s), err: (s) => void (stderr += s) });
  t.equal(created, 0, stderr);
  const apiKey = (JSON.parse(stdout) as { apiKey: string }).apiKey;

  const child = spawn(process.execPath, [...TSX_NODE_ARGS, main, 'start', '--config', configFile, '--redis-cluster', cluster.seeds, '--port', '0', '--log-level', 'warn'], { stdio: ['ignore', 'pipe', 'pipe'], env });
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL'); });
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
  t.match(banner, `Store:     Redis Cluster at ${cluster.seeds} (keys, balances and usage shared by every instance)`);
  const origin = /(http:\/\/127\.0\.0\.1:\d+)\/eth\/v3\//.exec(banner)![1]!;
  const answer = await post(`${origin}/eth/v3/${apiKey}`, rpc('eth_blockNumber', []));
  t.equal(answer.status, 200);
  t.ok((answer.json as { result?: string }).result, 'answered through the cluster store');
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  t.equal(await exited, 0);
});

t.test('a store command names the Cluster it works on (and a Sentinel its master), never a default host', async (t) => {
  const child = spawn(process.execPath, [...TSX_NODE_ARGS, main, 'keys', 'list', '--json', '--config', configFile, '--redis-cluster', cluster.seeds], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  t.equal(code, 0, stderr);
  t.equal(stderr.split('\n')[0], `store: Redis Cluster at ${cluster.seeds}; config: ${configFile}`);

  const sentinel = resolveConfig({ ...defaultConfig, plugins: { 'ledger-redis': { sentinels: ['10.0.0.7:26379', '10.0.0.8:26379'], name: 'tollgate' } } });
  t.equal(describeTarget(sentinel, 'gateway.yaml', storeDescription), 'store: Redis Sentinel master "tollgate" via 10.0.0.7:26379,10.0.0.8:26379; config: gateway.yaml');
  const single = resolveConfig({ ...defaultConfig, plugins: { 'ledger-redis': { url: 'redis://user:secret@10.0.0.9:6380/2' } } });
  t.equal(describeTarget(single, 'gateway.yaml', storeDescription), 'store: Redis at 10.0.0.9:6380; config: gateway.yaml', 'no credentials shown');
});

t.test('tollgate start --redis <a Cluster node> is refused at start with one line', async (t) => {
  const node = cluster.nodes[0]!;
  const child = spawn(process.execPath, [...TSX_NODE_ARGS, main, 'start', '--config', configFile, '--redis', `redis://${node.address}`, '--port', '0', '--log-level', 'warn'], { stdio: ['ignore', 'pipe', 'pipe'], env });
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL'); });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c));
  child.stdout.resume();
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  t.not(code, 0);
  const lines = stderr.trim().split('\n');
  t.equal(lines.length, 1, `one line: ${stderr}`);
  t.match(lines[0], `Redis at ${node.address} is a node of a Redis Cluster: name its nodes with --redis-cluster`);
});
