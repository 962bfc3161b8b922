/**
 * `tollgate config check` on an installation that lacks a driver the configuration needs: the missing
 * package is a problem, as `tollgate start` has it (exit 1, never "valid"), and the rest of the
 * configuration is checked all the same.
 */
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TSX_NODE_ARGS } from './helpers/tsx-node-args.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const hide = fileURLToPath(new URL('./helpers/hide-packages.mjs', import.meta.url));
const dir = await mkdtemp(join(tmpdir(), 'tollgate-check-drivers-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
const env = { TOLLGATE_HIDDEN_PACKAGES: 'bs58', TOLLGATE_ADMIN_TOKEN: '', TOLLGATE_REDIS_URL: '' };

/** Runs `tollgate config check <file>` without the bs58 package, to its exit. */
async function check(yaml: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const file = join(dir, `config-${Math.random().toString(36).slice(2)}.yaml`);
  await writeFile(file, yaml);
  const child = spawn(process.execPath, [...TSX_NODE_ARGS, '--import', hide, 'examples/gateway/main.ts', 'config', 'check', file], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, stdout, stderr: stderr.replaceAll(file, '<file>') };
}

const SOLANA = 'networks:\n  - name: sol\n    families: [solana]\n    upstreams:\n      - url: http://127.0.0.1:1\n';

t.test('a missing driver is a problem: exit 1, not "valid"', async (t) => {
  const { code, stdout, stderr } = await check(`${SOLANA}plugins:\n  solana: {}\n`);
  t.equal(code, 1);
  t.equal(stdout, '', 'no resolved configuration printed');
  t.equal(
    stderr,
    'tollgate start would refuse <file>:\n  the gateway needs packages that are not installed: npm install bs58 (the settings of the plugins that need them, and the network families those provide, are checked once they are installed)\n',
  );
});

t.test('the rest of the configuration is checked all the same', async (t) => {
  const { code, stdout, stderr } = await check(`${SOLANA}  - name: eth\n    families: [evm]\n    upstreams:\n      - url: http://127.0.0.1:1\n    unknownMethods: { policy: forward, credits: 5, namespaces: [admin] }\nplugins:\n  health: { bogus: 1 }\n  solana: {}\n  solanna: {}\n`);
  t.equal(code, 1);
  t.equal(stdout, '');
  const lines = stderr.trimEnd().split('\n');
  t.equal(lines[0], 'invalid configuration in <file>:');
  t.match(stderr, /\n {2}plugins\.health: must NOT have additional properties \(bogus\)|\n {2}plugins\.health\.bogus: /, 'another plugin\'s settings are checked');
  t.match(stderr, /\n {2}networks\[1\]\.unknownMethods\.namespaces\[0\]: admin_ methods administer the node/, 'the networks the loaded families serve are checked');
  t.match(stderr, /\n {2}plugins\.solanna: no plugin of the gateway is named "solanna"/, 'a misspelt section is found');
  t.match(lines.at(-1)!, /^ {2}the gateway needs packages that are not installed: npm install bs58 /, 'and the missing package is one of the problems');
  t.notMatch(stderr, /network family "solana"|plugins\.solana: /, 'what the unloaded plugin provides is not reported missing');
});
