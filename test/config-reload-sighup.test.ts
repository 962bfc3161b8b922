/**
 * SIGHUP on the `tollgate start` process: the config file is read again and its new upstream serves the
 * calls that follow; a bad file is refused and logged, and the running configuration stays.
 */
import t from 'tap';
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
