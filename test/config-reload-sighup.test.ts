/**
 * SIGHUP on the `tollgate start` process: the config file is read again and its new upstream serves the
 * calls that follow; a bad file is refused and logged, and the running configuration stays.
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startAnvil } from '@tollgate/devnet';
import { startServing } from './helpers/example-process.js';
import { TSX_NODE_ARGS } from './helpers/tsx-node-args.js';
import { startCountingRelay } from './helpers/counting-relay.js';
import { post, rpc } from './helpers/json-rpc.js';
import { until } from './helpers/until.js';
import { childProcesses } from './helpers/processes.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const dir = await mkdtemp(join(tmpdir(), 'tollgate-sighup-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
const anvil = await startAnvil();
t.teardown(() => anvil.stop());
const first = await startCountingRelay(anvil.url);
const second = await startCountingRelay(anvil.url);
t.teardown(async () => { await first.close(); await second.close(); });

const KEY = 'sighup-test-key-0000001';
const config = join(dir, 'gateway.yaml');
const yaml = (upstream: string): string => `keys:\n  - { key: ${KEY}, plan: growth }\nnetworks:\n  - name: eth\n    families: [evm]\n    upstreams:\n      - url: ${upstream}\n`;
await writeFile(config, yaml(first.url));
const gateway = await startServing('tollgate start', root, process.execPath, [...TSX_NODE_ARGS, 'examples/gateway/main.ts', 'start', '--config', config, '--data-dir', dir, '--log-level', 'info'], { TOLLGATE_ADMIN_TOKEN: '', TOLLGATE_REDIS_URL: '' });
t.teardown(() => gateway.stop());
const url = `${gateway.origin}/eth/v3/${KEY}`;

t.test('SIGHUP swaps in the file\'s new upstream for the calls that follow', async (t) => {
  t.equal((await post(url, rpc('eth_chainId', []))).status, 200);
  t.equal(first.count('eth_chainId'), 1);
  await writeFile(config, yaml(second.url));
  gateway.child.kill('SIGHUP');
  await until('the reload is logged', () => gateway.output().includes('configuration reloaded'));
  t.same((await post(url, rpc('eth_chainId', [], 2))).json, { jsonrpc: '2.0', id: 2, result: '0x7a69' });
  t.equal(second.count('eth_chainId'), 1, 'the new upstream served');
  t.equal(first.count('eth_chainId'), 1, 'the old one no more');
});

t.test('a bad file is refused with config check\'s words, and the process keeps serving', async (t) => {
  await writeFile(config, 'networks:\n  - name: eth\n    families: [evm]\n    upstreams:\n      - url: ftp://10.0.0.1\n');
  gateway.child.kill('SIGHUP');
  await until('the refusal is logged', () => gateway.output().includes('reload refused'));
  t.match(gateway.output(), /networks\[0\]\.upstreams\[0\]\.url: must match pattern/);
  t.equal((await post(url, rpc('eth_chainId', []))).status, 200);
  t.equal(second.count('eth_chainId'), 2, 'still the reloaded upstream');
  t.equal(gateway.child.exitCode, null, 'still running');
});

t.test('with workers, SIGHUP to the primary or to one worker reloads every worker, and the group keeps serving', async (t) => {
  const groupDir = await mkdtemp(join(tmpdir(), 'tollgate-sighup-workers-'));
  t.teardown(() => rm(groupDir, { recursive: true, force: true }));
  const groupConfig = join(groupDir, 'gateway.yaml');
  await writeFile(groupConfig, yaml(first.url));
  const group = await startServing('tollgate start --workers 2', root, process.execPath, [...TSX_NODE_ARGS, 'examples/gateway/main.ts', 'start', '--workers', '2', '--config', groupConfig, '--data-dir', groupDir, '--log-level', 'info'], { TOLLGATE_ADMIN_TOKEN: '', TOLLGATE_REDIS_URL: '' });
  t.teardown(() => group.stop());
  const groupUrl = `${group.origin}/eth/v3/${KEY}`;
  // A new connection per call: the primary hands connections to the workers in turn, so both answer.
  const calls = async (n: number): Promise<void> => {
    for (let i = 0; i < n; i++) t.equal((await post(groupUrl, rpc('eth_chainId', [], i), { 'content-type': 'application/json', connection: 'close' })).status, 200);
  };
  const before = { first: first.count('eth_chainId'), second: second.count('eth_chainId') };
  await calls(4);
  t.equal(first.count('eth_chainId') - before.first, 4, 'the file\'s upstream serves on every worker');

  await writeFile(groupConfig, yaml(second.url));
  group.child.kill('SIGHUP');
  await until('the group reload is logged', () => group.output().includes('configuration reloaded on every worker'));
  t.equal((group.output().match(/configuration reloaded"/g) ?? []).length, 2, 'each of the two workers reloaded');
  const mid = { first: first.count('eth_chainId'), second: second.count('eth_chainId') };
  await calls(6);
  t.equal(second.count('eth_chainId') - mid.second, 6, 'every worker serves the new upstream');
  t.equal(first.count('eth_chainId'), mid.first, 'no worker kept the old one');

  const workers = childProcesses(group.child.pid!).filter((c) => c.command === 'node');
  t.equal(workers.length, 2, 'two workers run');
  await writeFile(groupConfig, yaml(first.url));
  process.kill(workers[0]!.pid, 'SIGHUP');
  await until('the second group reload is logged', () => (group.output().match(/configuration reloaded on every worker/g) ?? []).length === 2);
  const after = { first: first.count('eth_chainId'), second: second.count('eth_chainId') };
  await calls(6);
  t.equal(first.count('eth_chainId') - after.first, 6, 'a SIGHUP to one worker reloaded them all');
  t.equal(second.count('eth_chainId'), after.second);
  t.same(childProcesses(group.child.pid!).filter((c) => c.command === 'node').map((c) => c.pid).sort(), workers.map((c) => c.pid).sort(), 'no process of the group ended');

  // docs/operations.md's command, its pattern being this group's command line (the path keeps other gateways on the machine out of it).
  const pattern = `main\\.ts start --workers 2 --config ${groupConfig}`;
  await writeFile(groupConfig, yaml(second.url));
  const matching = spawnSync('pgrep', ['-f', pattern], { encoding: 'utf8' }).stdout.trim().split('\n');
  t.equal(matching.length, 3, 'the command line matches the primary and both workers');
  const oldForm = spawnSync('sh', ['-c', `kill -HUP "$(pgrep -f '${pattern}')"`], { encoding: 'utf8' });
  t.not(oldForm.status, 0, `kill -HUP "$(pgrep -f …)" fails on a worker group: ${oldForm.stderr.trim()}`);
  t.equal(spawnSync('pgrep', ['-o', '-f', pattern], { encoding: 'utf8' }).stdout.trim(), String(group.child.pid), 'the oldest matching process is the primary');
  t.equal(spawnSync('pkill', ['-HUP', '-o', '-f', pattern]).status, 0, 'pkill -HUP -o -f signals it');
  await until('the third group reload is logged', () => (group.output().match(/configuration reloaded on every worker/g) ?? []).length === 3);
  const documented = { first: first.count('eth_chainId'), second: second.count('eth_chainId') };
  await calls(4);
  t.equal(second.count('eth_chainId') - documented.second, 4, 'every worker serves the file\'s new upstream');
  t.equal(first.count('eth_chainId'), documented.first);
});
