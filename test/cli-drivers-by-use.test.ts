/**
 * `tollgate start` loads a plugin's driver only when the configuration uses what needs it: an EVM-only
 * gateway on Redis runs on a machine without bs58 (Solana), multiformats (the file API) or jose (JWT
 * keys); a configuration that uses one of those names the missing package in one line.
 */
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startAnvil } from '@tollgate/devnet';
import { startServing } from './helpers/example-process.js';
import { startRedisServer } from './helpers/redis-server.js';
import { TSX_NODE_ARGS } from './helpers/tsx-node-args.js';
import { post, rpc } from './helpers/json-rpc.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const hide = fileURLToPath(new URL('./helpers/hide-packages.mjs', import.meta.url));
const HIDDEN = 'bs58,multiformats,@ipld/dag-pb,jose';
const dir = await mkdtemp(join(tmpdir(), 'tollgate-drivers-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
const args = (config: string): string[] => [...TSX_NODE_ARGS, '--import', hide, 'examples/gateway/main.ts', 'start', '--config', config, '--port', '0'];
const env = { TOLLGATE_HIDDEN_PACKAGES: HIDDEN, TOLLGATE_ADMIN_TOKEN: '', TOLLGATE_REDIS_URL: '' };

/** Runs `tollgate start` to its exit (for configurations it refuses). */
function refusedStart(config: string): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, args(config), { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stderr })));
}

t.test('an EVM-only gateway on Redis serves without the Solana, file API and JWT drivers', async (t) => {
  const redis = await startRedisServer();
  t.teardown(() => redis.stop());
  const anvil = await startAnvil();
  t.teardown(() => anvil.stop());
  const config = join(dir, 'evm.yaml');
  await writeFile(config, `keys:\n  - { key: drivers-key-000001, plan: growth }\nnetworks:\n  - name: eth\n    families: [evm]\n    upstreams:\n      - url: ${anvil.url}\nplugins:\n  ledger-redis: { url: '${redis.url}' }\n`);
  const gateway = await startServing('tollgate start', root, process.execPath, args(config), env);
  t.teardown(() => gateway.stop());
  const answer = await post(`${gateway.origin}/eth/v3/drivers-key-000001`, rpc('eth_chainId', []));
  t.same(answer.json, { jsonrpc: '2.0', id: 1, result: '0x7a69' });
  t.equal(await gateway.stop(), 0, 'and stops cleanly');
});

t.test('a Solana network names the missing bs58', async (t) => {
  const config = join(dir, 'solana.yaml');
  await writeFile(config, 'networks:\n  - name: sol\n    families: [solana]\n    upstreams:\n      - url: http://127.0.0.1:1\n');
  const { code, stderr } = await refusedStart(config);
  t.equal(code, 1);
  t.equal(stderr.trim(), 'tollgate: the gateway needs packages that are not installed: npm install bs58', 'one line naming the package');
});

t.test('a key that takes JWTs names the missing jose at start', async (t) => {
  const config = join(dir, 'jwt.yaml');
  const publicKey = '-----BEGIN PUBLIC KEY-----\\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\\n-----END PUBLIC KEY-----\\n';
  await writeFile(config, `keys:\n  - key: drivers-key-000002\n    plan: growth\n    settings:\n      security:\n        jwt: { keys: [{ kid: one, alg: ES256, publicKey: "${publicKey}" }] }\nnetworks:\n  - name: eth\n    families: [evm]\n    upstreams:\n      - url: http://127.0.0.1:1\n`);
  const { code, stderr } = await refusedStart(config);
  t.equal(code, 1, stderr);
  t.match(stderr, /JWT checks of API keys \(tollgate\/plugins\/security\) needs the package "jose", which is not installed: npm install jose/);
});
