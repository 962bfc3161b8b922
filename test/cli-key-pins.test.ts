import t from 'tap';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfigFile } from '../core/index.js';
import { applyStoreFlags } from '../examples/gateway/store-flags.js';
import { parseCli } from '../examples/gateway/cli.js';
import { runCommand } from '../examples/gateway/store-commands.js';
import { openSqliteStore, SqlitePinStore } from '../plugins/ledger-sqlite/index.js';

// `tollgate keys pins <id>` reads a key's pins and stored bytes from the store the gateway uses, and
// `tollgate usage <id>` shows the stored bytes beside the calls, with the plan's storageBytes when it sets one.

const dir = await mkdtemp(join(tmpdir(), 'tollgate-cli-pins-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
const configFile = join(dir, 'gateway.yaml');
await writeFile(
  configFile,
  [
    'networks:',
    '  - name: files',
    '    families: [ipfs]',
    '    upstreams:',
    '      - url: http://127.0.0.1:5001',
    'plugins:',
    '  ipfs:',
    '    plans:',
    '      growth: { readsPerSecond: 25, writesPerSecond: 5, storageBytes: 1000 }',
    '',
  ].join('\n'),
);

async function command(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const cli = parseCli([...args, '--config', configFile, '--data-dir', dir]);
  const config = await loadConfigFile(configFile);
  applyStoreFlags(config, cli, {});
  let stdout = '';
  let stderr = '';
  const code = await runCommand(cli, config, { out: (s) => void (stdout += s), err: (s) => void (stderr += s) });
  return { code, stdout, stderr };
}

t.test('keys pins prints a key\'s pins and their bytes', async (t) => {
  t.equal((await command(['keys', 'create', '--plan', 'growth', '--id', 'acme'])).code, 0);
  // What the gateway records when the key pins through the file-storage API.
  const store = openSqliteStore({ path: join(dir, 'tollgate.db') });
  const pins = new SqlitePinStore(store.db);
  pins.add({ keyId: 'acme', cid: 'QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o', name: 'hello.txt', bytes: 20, createdAt: Date.UTC(2026, 10, 1) }, undefined);
  pins.add({ keyId: 'acme', cid: 'QmWkHFpYBZ9mpPRreRbMhhYWXfUhBAue3JkbbpFqwowSRb', bytes: 18, createdAt: Date.UTC(2026, 10, 2) }, undefined);
  pins.add({ keyId: 'other', cid: 'QmdFyxZXsFiP4csgfM5uPu99AvFiKH62CSPDw5TP92nr7w', bytes: 13, createdAt: Date.UTC(2026, 10, 3) }, undefined);
  store.close();

  const text = await command(['keys', 'pins', 'acme']);
  t.equal(text.code, 0, text.stderr);
  const lines = text.stdout.trimEnd().split('\n');
  t.equal(lines[0], 'acme: 38 bytes pinned in 2 pins, of 1000 the plan allows');
  t.match(lines[1], /^ {2}QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o +20 bytes {2}2026-11-01T00:00:00\.000Z {2}hello\.txt$/);
  t.match(lines[2], /^ {2}QmWkHFpYBZ9mpPRreRbMhhYWXfUhBAue3JkbbpFqwowSRb +18 bytes {2}2026-11-02T00:00:00\.000Z$/);
  t.equal(lines.length, 3, 'another key\'s pin is not listed');

  const json = await command(['keys', 'pins', 'acme', '--json']);
  const parsed = JSON.parse(json.stdout) as { id: string; storage: { bytes: number; pins: number }; pins: Array<{ cid: string }> };
  t.same(parsed.storage, { bytes: 38, pins: 2, limitBytes: 1000 });
  t.same(parsed.pins.map((p) => p.cid), ['QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o', 'QmWkHFpYBZ9mpPRreRbMhhYWXfUhBAue3JkbbpFqwowSRb']);

  const unknown = await command(['keys', 'pins', 'nobody']);
  t.equal(unknown.code, 1, 'an unknown key is refused');
  t.equal((await command(['keys', 'pins'])).code, 2, 'a key id is required');
});

t.test('usage shows the bytes a key stores: a key that pinned content, and a key with none', async (t) => {
  const text = await command(['usage', 'acme']);
  t.equal(text.code, 0, text.stderr);
  t.match(text.stdout, /^acme on \d{4}-\d{2}-\d{2}: 0 calls, 0 credits/, 'the day\'s calls first');
  t.equal(text.stdout.trimEnd().split('\n').at(-1), 'acme: 38 bytes pinned in 2 pins, of 1000 the plan allows', 'then what the key stores, and its plan\'s allowance');
  const json = await command(['usage', 'acme', '--json']);
  t.equal(json.code, 0, json.stderr);
  const parsed = JSON.parse(json.stdout) as { id: string; days: unknown[]; storage: unknown };
  t.equal(parsed.days.length, 1);
  t.same(parsed.storage, { bytes: 38, pins: 2, limitBytes: 1000 });

  // A plan without storageBytes: no allowance is shown.
  t.equal((await command(['keys', 'create', '--plan', 'team', '--id', 'empty'])).code, 0);
  const empty = await command(['usage', 'empty']);
  t.equal(empty.code, 0, empty.stderr);
  t.equal(empty.stdout.trimEnd().split('\n').at(-1), 'empty: 0 bytes pinned in 0 pins');
  t.same((JSON.parse((await command(['usage', 'empty', '--json'])).stdout) as { storage: unknown }).storage, { bytes: 0, pins: 0 });
});

t.test('usage with a bad plugins.ipfs section is refused with its problem, as start refuses it', async (t) => {
  const badFile = join(dir, 'bad.yaml');
  await writeFile(badFile, 'networks:\n  - name: files\n    families: [ipfs]\n    upstreams:\n      - url: http://127.0.0.1:5001\nplugins:\n  ipfs:\n    plans:\n      growth: { readsPerSecond: 25, writesPerSecond: 5, storageBytes: -3 }\n');
  const cli = parseCli(['usage', 'acme', '--config', badFile, '--data-dir', dir]);
  const config = await loadConfigFile(badFile);
  applyStoreFlags(config, cli, {});
  let stderr = '';
  const code = await runCommand(cli, config, { out: () => undefined, err: (s) => void (stderr += s) });
  t.equal(code, 1);
  t.match(stderr, /plugins\.ipfs\.plans\.growth\.storageBytes: must be >= 0/);
});
