import t from 'tap';
import { adminRequest, type AdminAnswer } from './helpers/admin-request.js';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { PassThrough } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveConfig, type GatewayConfigInput } from '../core/index.js';
import { MemoryPlanRegistry, MemoryUsageRecorder, type UsageRow } from '../core/store-api.js';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { ledgerSqlite, openSqliteStore } from '../plugins/ledger-sqlite/index.js';
import { usageExport } from '../plugins/admin/index.js';
import Database from 'better-sqlite3';
import { admin } from '../plugins/admin/index.js';
import { parseCli } from '../examples/gateway/cli.js';
import { runCommand } from '../examples/gateway/store-commands.js';
import { startTestGateway } from './helpers/gateway.js';
import { post, rpc } from './helpers/json-rpc.js';
import { startTinyUpstream } from './helpers/tiny-upstream.js';
import { until } from './helpers/until.js';

const TOKEN = 'admin-token-for-plan-tests-0123456789';
const CONFIG_KEY = 'plans-config-key-0001';
const dir = await mkdtemp(join(tmpdir(), 'tollgate-plans-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
const path = join(dir, 'tollgate.db');
const upstream = await startTinyUpstream();
t.teardown(() => upstream.close());
const input: GatewayConfigInput = {
  keys: [{ key: CONFIG_KEY, id: 'from-config', plan: 'core' }],
  networks: [
    { name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url }] },
    { name: 'polygon', families: ['evm'], upstreams: [{ url: upstream.url }] },
  ],
  plans: { silver: { dailyCredits: 1_000, creditsPerSecond: 1_000, failover: false } },
  plugins: { admin: { token: TOKEN }, 'ledger-sqlite': { path } },
};
const gw = await startTestGateway(input, [ledgerSqlite(), admin(), httpTransport(), evmFamily()]);
t.teardown(() => gw.close());
const base = `${gw.origin}/admin/v1`;
// The CLI works on the same file, as `tollgate plans ... --config <file>` does next to a running gateway.
const cliConfig = resolveConfig(input);

function call(method: string, route: string, body?: unknown): Promise<AdminAnswer> {
  return adminRequest(`${base}${route}`, TOKEN, method, body);
}

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const stream = new PassThrough();
  stream.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const code = await runCommand(parseCli(args), cliConfig, { out: (s) => void (stdout += s), err: (s) => void (stderr += s), stream });
  return { code, stdout, stderr };
}

const url = (network: string, apiKey: string): string => `${gw.origin}/${network}/v3/${apiKey}`;

t.test('the memory registry keeps plans and tells of changes', async (t) => {
  const registry = new MemoryPlanRegistry();
  let told = 0;
  const stop = registry.watch(() => told++);
  t.ok(registry.insert({ name: 'a', dailyCredits: 1, creditsPerSecond: 1, failover: false, createdAt: 1, updatedAt: 1 }));
  t.notOk(registry.insert({ name: 'a', dailyCredits: 2, creditsPerSecond: 2, failover: true, createdAt: 2, updatedAt: 2 }), 'a name is taken once');
  t.match(registry.update('a', { dailyCredits: 5, failover: undefined }, 9), { dailyCredits: 5, failover: false, updatedAt: 9 });
  t.equal(registry.update('b', { dailyCredits: 5 }, 9), undefined);
  t.ok(registry.delete('a'));
  t.notOk(registry.delete('a'));
  await until('the listener heard every change', () => told === 3);
  stop();
  t.same(registry.list(), []);
});

t.test('plans through the admin API: created, used by a key at once, changed, deleted when unused', async (t) => {
  const listed = await call('GET', '/plans');
  t.match(listed.body, { plans: { silver: { dailyCredits: 1_000, source: 'config' }, growth: { source: 'config' } } }, 'the config and default plans are listed');

  const refused = await call('POST', '/plans', { name: 'silver', dailyCredits: 10, creditsPerSecond: 10 });
  t.equal(refused.status, 409, 'a config plan\'s name cannot be managed');
  t.match(refused.body, { error: { code: 'conflict', message: /comes from the config file/ } });
  t.equal((await call('POST', '/plans', { name: 'growth', dailyCredits: 10, creditsPerSecond: 10 })).status, 409, 'nor a default plan\'s');
  t.equal((await call('PATCH', '/plans/silver', { dailyCredits: 1 })).status, 409, 'a config plan is changed in the file');
  t.equal((await call('DELETE', '/plans/core')).status, 409);
  const bad = await call('POST', '/plans', { name: 'gold', dailyCredits: -1, creditsPerSecond: 0, failover: 'yes' });
  t.equal(bad.status, 400);
  t.match(bad.body, { error: { message: /dailyCredits: must be a whole number.*creditsPerSecond: must be a number above 0.*failover: must be true or false/ } });
  t.equal((await call('POST', '/plans', { dailyCredits: 1, creditsPerSecond: 1 })).status, 400, 'a name is required');

  const created = await call('POST', '/plans', { name: 'gold', dailyCredits: 160, creditsPerSecond: 1_000 });
  t.equal(created.status, 201, created.text);
  t.match(created.body, { plan: { name: 'gold', dailyCredits: 160, creditsPerSecond: 1_000, failover: false, source: 'store' } });
  t.equal((await call('POST', '/plans', { name: 'gold', dailyCredits: 1, creditsPerSecond: 1 })).status, 409, 'a managed name is taken once');
  t.match((await call('GET', '/plans/gold')).body, { plan: { name: 'gold', dailyCredits: 160 } });
  t.equal((await call('GET', '/plans/nothing')).status, 404);

  const key = await call('POST', '/keys', { plan: 'gold', id: 'golden' });
  t.equal(key.status, 201, 'a key may be put on a managed plan');
  const apiKey = key.body.apiKey as string;
  t.equal((await post(url('eth', apiKey), rpc('eth_blockNumber', []))).status, 200, 'the key works on its managed plan from its first call');
  t.equal((await post(url('eth', apiKey), rpc('eth_blockNumber', []))).status, 200);
  t.equal((await post(url('eth', apiKey), rpc('eth_blockNumber', []))).status, 402, 'the managed plan\'s daily credits apply (2 calls of 80)');
  t.match((await call('GET', '/keys/golden')).body, { balance: { dailyCredits: 160, used: 160 } }, 'the balance reads the managed plan');

  const raised = await call('PATCH', '/plans/gold', { dailyCredits: 400 });
  t.match(raised.body, { plan: { dailyCredits: 400, creditsPerSecond: 1_000 } });
  t.equal((await post(url('eth', apiKey), rpc('eth_blockNumber', []))).status, 200, 'a change made through this gateway applies to the next call');

  const inUse = await call('DELETE', '/plans/gold');
  t.equal(inUse.status, 409, 'a plan a key is on cannot be deleted');
  t.match(inUse.body, { error: { message: /plan "gold" is the plan of key golden/ } });
  t.equal((await call('PATCH', '/keys/golden', { plan: 'silver' })).status, 200);
  t.match((await call('DELETE', '/plans/gold')).body, { plan: { name: 'gold' } }, 'once no key is on it, it is deleted');
  t.equal((await call('GET', '/plans/gold')).status, 404);
  t.equal((await call('POST', '/keys', { plan: 'gold' })).status, 400, 'a deleted plan takes no keys');
});

t.test('plans through the CLI, on the store of a running gateway', async (t) => {
  const created = await cli(['plans', 'create', 'bronze', '--daily-credits', '80', '--credits-per-second', '500', '--json']);
  t.equal(created.code, 0, created.stderr);
  t.match(JSON.parse(created.stdout), { plan: { name: 'bronze', dailyCredits: 80, creditsPerSecond: 500, failover: false, source: 'store' } });
  const key = await cli(['keys', 'create', '--plan', 'bronze', '--id', 'bronze-key', '--json']);
  t.equal(key.code, 0, key.stderr);
  const apiKey = (JSON.parse(key.stdout) as { apiKey: string }).apiKey;
  // Another process changed the plans: the gateway learns it from its poll (once a second), never on a call.
  await until('the gateway knows the plan made by the CLI', async () => (await post(url('eth', apiKey), rpc('eth_blockNumber', []))).status === 200);
  t.equal((await post(url('eth', apiKey), rpc('eth_blockNumber', []))).status, 402, 'its daily credits: one call');

  t.equal((await cli(['plans', 'update', 'bronze', '--daily-credits', '800', '--failover', 'true'])).code, 0);
  await until('the gateway applies the CLI\'s change', async () => (await post(url('eth', apiKey), rpc('eth_blockNumber', []))).status === 200);
  const listed = await cli(['plans', 'list']);
  t.match(listed.stdout, /silver\s+1000 credits\/day\s+1000 credits\/s\s+failover no\s+\(config file\)/);
  t.match(listed.stdout, /bronze\s+800 credits\/day\s+500 credits\/s\s+failover yes\s+managed, changed /);

  const config = await cli(['plans', 'update', 'silver', '--daily-credits', '5']);
  t.equal(config.code, 1);
  t.match(config.stderr, /plan "silver" comes from the config file/);
  t.match((await cli(['plans', 'create', 'core', '--daily-credits', '5', '--credits-per-second', '5'])).stderr, /plan "core" comes from the config file \(or the default plans\)/);
  const inUse = await cli(['plans', 'delete', 'bronze']);
  t.equal(inUse.code, 1);
  t.match(inUse.stderr, /plan "bronze" is the plan of key bronze-key: move it to another plan first/);
  t.equal((await cli(['keys', 'revoke', 'bronze-key'])).code, 0);
  t.equal((await cli(['plans', 'delete', 'bronze'])).code, 1, 'a revoked key still holds its plan');
  t.equal((await cli(['keys', 'plan', 'bronze-key', 'core'])).code, 0);
  t.equal((await cli(['plans', 'delete', 'bronze'])).code, 0);

  t.equal((await cli(['plans', 'create', 'x', '--daily-credits', '5'])).code, 2, '--credits-per-second is required');
  t.equal((await cli(['plans', 'update', 'x'])).code, 2, 'an update changes something');
  t.equal((await cli(['plans', 'explode'])).code, 2);
  t.throws(() => parseCli(['plans', 'update', 'x', '--failover', 'maybe']), /--failover: "maybe" is not true or false/);
  t.throws(() => parseCli(['plans', 'update', 'x', '--daily-credits', 'lots']), /--daily-credits: "lots" is not a number/);
});

t.test('the usage export matches the calls made through the gateway', async (t) => {
  const made = await call('POST', '/keys', { plan: 'growth', id: 'exported' });
  const apiKey = made.body.apiKey as string;
  const calls: Array<[string, string, string]> = [
    ['eth', CONFIG_KEY, 'eth_blockNumber'],
    ['eth', CONFIG_KEY, 'eth_blockNumber'],
    ['polygon', CONFIG_KEY, 'eth_chainId'],
    ['eth', apiKey, 'eth_chainId'],
    ['polygon', apiKey, 'eth_blockNumber'],
    ['polygon', apiKey, 'eth_blockNumber'],
    ['polygon', apiKey, 'eth_blockNumber'],
  ];
  for (const [network, key, method] of calls) t.equal((await post(url(network, key), rpc(method, []))).status, 200);
  const failed = await post(url('eth', apiKey), rpc('eth_noSuchMethod', []));
  t.equal(failed.status, 200, 'an unknown method is answered with a JSON-RPC error');

  const today = new Date().toISOString().slice(0, 10);
  const json = await call('GET', `/usage/export?from=${today}&to=${today}&format=json`);
  t.equal(json.status, 200, json.text);
  t.match(json.headers['content-type'], 'application/json');
  t.match(json.headers['content-disposition'], `attachment; filename="usage-${today}-to-${today}.json"`);
  type Row = { day: string; keyId: string; network: string; method: string; calls: number; credits: number; bytes: number; failed: number };
  const rows = (json.body as { rows: Row[] }).rows.filter((r) => r.keyId === 'from-config' || r.keyId === 'exported');
  const pick = (keyId: string, network: string, method: string): Row | undefined => rows.find((r) => r.keyId === keyId && r.network === network && r.method === method);
  t.match(pick('from-config', 'eth', 'eth_blockNumber'), { day: today, calls: 2, credits: 160, failed: 0 }, 'a config key is exported');
  t.match(pick('from-config', 'polygon', 'eth_chainId'), { calls: 1, failed: 0 });
  t.match(pick('exported', 'eth', 'eth_chainId'), { calls: 1 }, 'a managed key is exported');
  t.match(pick('exported', 'polygon', 'eth_blockNumber'), { calls: 3, credits: 240 }, 'networks are kept apart');
  t.match(pick('exported', 'eth', 'eth_noSuchMethod'), { calls: 1, credits: 0, failed: 1 }, 'failed calls are counted');
  t.equal(rows.length, 5, 'one row per key, day, network and method');
  t.ok(rows.every((r) => r.bytes > 0 || r.failed === 1), 'bytes served are counted');
  t.match(pick('from-config', 'eth', 'eth_blockNumber'), { network: 'eth' });

  const csv = await call('GET', `/usage/export?from=${today}&to=${today}`);
  t.equal(csv.status, 200);
  t.match(csv.headers['content-type'], 'text/csv');
  const lines = csv.text.trimEnd().split('\r\n');
  t.equal(lines[0], 'day,key_id,network,method,calls,credits,bytes,failed', 'CSV has a header');
  const row = pick('exported', 'polygon', 'eth_blockNumber')!;
  t.ok(lines.includes(`${today},exported,polygon,eth_blockNumber,3,240,${row.bytes},0`), 'CSV rows carry the same numbers');
  t.equal(lines.length - 1, (json.body as { rows: Row[] }).rows.length, 'CSV and JSON have the same rows');

  const exported = await cli(['usage', 'export', '--from', today, '--format', 'json']);
  t.equal(exported.code, 0, exported.stderr);
  t.same(JSON.parse(exported.stdout), json.body, 'the CLI exports what the admin API does');
  const file = join(dir, 'usage.csv');
  const written = await cli(['usage', 'export', '--from', today, '--to', today, '--output', file]);
  t.equal(written.code, 0, written.stderr);
  t.match(written.stderr, `written to ${file}`);
  t.equal(await readFile(file, 'utf8'), csv.text, 'the CLI writes the same CSV to a file');

  t.equal((await call('GET', '/usage/export?from=2026-02-30')).status, 400, 'a day that does not exist is refused');
  t.equal((await call('GET', `/usage/export?from=${today}&format=xml`)).status, 400);
  t.equal((await call('GET', '/usage/export?from=2025-01-01&to=2026-06-01')).status, 400, 'a range over a year is refused');
  t.equal((await cli(['usage', 'export'])).code, 2, '--from is required');
  const unwritable = await cli(['usage', 'export', '--from', today, '--output', join(dir, 'no-such-folder', 'usage.csv')]);
  t.equal(unwritable.code, 1, 'a file that cannot be written is a refusal, not a crash');
  t.match(unwritable.stderr, /the export to .*no-such-folder\/usage\.csv stopped, incomplete: ENOENT/);
});

t.test('CSV quotes what needs quoting and defuses formulas', async (t) => {
  const made = await call('POST', '/keys', { plan: 'growth', id: 'quoting' });
  const apiKey = made.body.apiKey as string;
  for (const method of ['=1+1', 'a,b', 'say "hi"']) await post(url('eth', apiKey), rpc(method, []));
  const today = new Date().toISOString().slice(0, 10);
  const csv = await call('GET', `/usage/export?from=${today}`);
  const mine = csv.text.split('\r\n').filter((line) => line.includes(',quoting,'));
  t.same(mine.map((line) => line.split(',eth,')[1]!.replace(/,\d+,\d+,\d+,\d+$/, '')).sort(), ['"\'=1+1"', '"a,b"', '"say ""hi"""'].sort());
});

t.test('a SQLite file of the version before usage per network keeps its usage, as network \'\'', async (t) => {
  const file = join(dir, 'schema-3.db');
  // The schema as version 3 left it (keys, balances, usage by method with cache counts, refunds).
  const old = new Database(file);
  old.exec(`CREATE TABLE keys (id TEXT PRIMARY KEY, key_hash TEXT NOT NULL UNIQUE, key_hint TEXT NOT NULL, plan TEXT NOT NULL, label TEXT,
              secret_hash TEXT, settings TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, revoked_at INTEGER);
            CREATE TABLE balances (key_id TEXT NOT NULL, day TEXT NOT NULL, used INTEGER NOT NULL, PRIMARY KEY (key_id, day)) WITHOUT ROWID;
            CREATE TABLE usage (key_id TEXT NOT NULL, day TEXT NOT NULL, method TEXT NOT NULL, calls INTEGER NOT NULL, credits INTEGER NOT NULL,
              bytes INTEGER NOT NULL, failed INTEGER NOT NULL, PRIMARY KEY (key_id, day, method)) WITHOUT ROWID;
            CREATE INDEX balances_by_day ON balances (day);
            CREATE INDEX usage_by_day ON usage (day);
            CREATE TABLE refunds (id TEXT PRIMARY KEY, day TEXT NOT NULL) WITHOUT ROWID;
            CREATE INDEX refunds_by_day ON refunds (day);
            ALTER TABLE usage ADD COLUMN cache_hits INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE usage ADD COLUMN cache_misses INTEGER NOT NULL DEFAULT 0;
            INSERT INTO usage VALUES ('acme', '2026-03-01', 'eth_call', 5, 400, 1000, 1, 2, 3);
            PRAGMA user_version = 3;`);
  old.close();
  const store = openSqliteStore({ path: file });
  t.teardown(() => store.close());
  t.same(store.usage.usage('acme', '2026-03-01'), { eth_call: { calls: 5, credits: 400, bytes: 1000, failed: 1, cacheHits: 2, cacheMisses: 3 } });
  store.usage.record({ keyId: 'acme', network: 'eth', method: 'eth_call', at: Date.parse('2026-03-01T12:00:00Z'), calls: 1, credits: 80, bytes: 10, failed: false });
  store.writer.flush();
  t.same(store.usage.usage('acme', '2026-03-01'), { eth_call: { calls: 6, credits: 480, bytes: 1010, failed: 1, cacheHits: 2, cacheMisses: 3 } }, 'a key\'s usage adds up its networks');
  const rows = [];
  for await (const row of store.usage.usageRows(['acme'], '2026-02-28', '2026-03-02')) rows.push(row);
  t.same(rows, [
    { day: '2026-03-01', keyId: 'acme', network: '', method: 'eth_call', calls: 5, credits: 400, bytes: 1000, failed: 1, cacheHits: 2, cacheMisses: 3 },
    { day: '2026-03-01', keyId: 'acme', network: 'eth', method: 'eth_call', calls: 1, credits: 80, bytes: 10, failed: 0 },
  ]);
  t.same(store.plans.list(), [], 'the plans table exists, empty');
});

t.test('the memory recorder lists rows by day, key as asked, network and method', async (t) => {
  const usage = new MemoryUsageRecorder();
  const at = (day: string): number => Date.parse(`${day}T08:00:00Z`);
  const event = { calls: 1, credits: 10, bytes: 5, failed: false };
  usage.record({ ...event, keyId: 'b', network: 'eth', method: 'm2', at: at('2026-04-01') });
  usage.record({ ...event, keyId: 'a', network: 'polygon', method: 'm1', at: at('2026-04-01') });
  usage.record({ ...event, keyId: 'a', network: 'eth', method: 'm1', at: at('2026-04-01'), failed: true });
  usage.record({ ...event, keyId: 'a', network: 'eth', method: 'm1', at: at('2026-04-02') });
  usage.record({ ...event, keyId: 'c', network: 'eth', method: 'm1', at: at('2026-04-02') });
  const rows = [];
  for await (const row of usage.usageRows(['b', 'a'], '2026-04-01', '2026-04-03')) rows.push([row.day, row.keyId, row.network, row.method, row.calls, row.failed]);
  t.same(rows, [
    ['2026-04-01', 'b', 'eth', 'm2', 1, 0],
    ['2026-04-01', 'a', 'eth', 'm1', 1, 1],
    ['2026-04-01', 'a', 'polygon', 'm1', 1, 0],
    ['2026-04-02', 'a', 'eth', 'm1', 1, 0],
  ], 'keys not asked for are left out');
  t.same(usage.usage('a', '2026-04-01'), { m1: { calls: 2, credits: 20, bytes: 10, failed: 1 } }, 'a key\'s usage adds up its networks');
});

t.test('an export is produced as it is read, never whole in memory', async (t) => {
  /** A memory recorder that counts the rows taken from it. */
  class CountingRecorder extends MemoryUsageRecorder {
    taken = 0;
    override async *usageRows(keyIds: readonly string[], from: string, to: string): AsyncGenerator<UsageRow> {
      for await (const row of super.usageRows(keyIds, from, to)) {
        this.taken++;
        yield row;
      }
    }
  }
  const usage = new CountingRecorder();
  const keys = Array.from({ length: 200 }, (_, i) => ({ key: `export-key-${String(i).padStart(4, '0')}`, id: `k${i}`, plan: 'core' }));
  const at = Date.parse('2026-06-01T10:00:00Z');
  for (const { id } of keys) for (let m = 0; m < 100; m++) usage.record({ keyId: id, network: 'eth', method: `method_${m}`, at, calls: 1, credits: 1, bytes: 1, failed: false });
  const config = resolveConfig({ keys, networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: 'http://127.0.0.1:1' }] }] });
  const exported = await usageExport({ config, registry: undefined, usage, now: () => at }, { from: '2026-06-01', format: 'csv' });
  t.equal(usage.taken, 0, 'nothing is read before the text is asked for');
  const pieces = exported.chunks[Symbol.asyncIterator]();
  const first = await pieces.next();
  t.ok(first.done !== true && first.value.length < 40_000, `the first piece is small (${first.value?.length} characters)`);
  t.ok(usage.taken < 1_000, `only the rows of the first piece were read (${usage.taken} of 20000)`);
  let lines = (first.value as string).split('\r\n').length - 1;
  for (let next = await pieces.next(); next.done !== true; next = await pieces.next()) lines += next.value.split('\r\n').length - 1;
  t.equal(lines, 1 + 20_000, 'the header and every row, in the end');
  t.equal(usage.taken, 20_000);
});
