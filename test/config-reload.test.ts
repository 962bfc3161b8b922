import 'reflect-metadata';
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { createGateway, ConfigError, loadConfigFile, type GatewayConfigInput } from '../core/index.js';
import { Tokens } from '../core/plugin-api.js';
import { type CreditLedger } from '../core/store-api.js';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { admin } from '../plugins/admin/index.js';
import { ledgerSqlite } from '../plugins/ledger-sqlite/index.js';
import { startAnvil } from '@tollgate/devnet';
import { startCountingRelay } from './helpers/counting-relay.js';
import { post, rpc } from './helpers/json-rpc.js';
import { until } from './helpers/until.js';

// Reloading the configuration file: a price and an upstream change for new calls, calls in flight
// finish on what they started with, a bad file is refused whole.
const anvil = await startAnvil();
t.teardown(() => anvil.stop());
const before = await startCountingRelay(anvil.url);
const after = await startCountingRelay(anvil.url);
t.teardown(async () => { await before.close(); await after.close(); });

const dir = mkdtempSync(join(tmpdir(), 'tollgate-reload-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const file = join(dir, 'gateway.json');
const TOKEN = 'reload-admin-token-0123456789';
const KEY = 'reload-test-key-000001';
const configWith = (upstream: string, blockNumberPrice: number, plans?: GatewayConfigInput['plans']): GatewayConfigInput => ({
  log: { level: 'silent' },
  server: { host: '127.0.0.1', port: 0 },
  keys: [{ key: KEY, id: 'reload', plan: 'tiny' }],
  plans: plans ?? { tiny: { dailyCredits: 1_000_000, creditsPerSecond: 1_000_000, failover: false } },
  networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: upstream }] }],
  plugins: { admin: { token: TOKEN }, evm: { credits: { eth_blockNumber: blockNumberPrice } } },
});
writeFileSync(file, JSON.stringify(configWith(before.url, 80)));

const gateway = await createGateway({ config: await loadConfigFile(file), configFile: file, plugins: [ledgerSqlite({ path: ':memory:' }), admin(), httpTransport(), evmFamily()] });
t.teardown(() => gateway.close());
const server = await gateway.listen();
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const url = `${origin}/eth/v3/${KEY}`;
const ledger = gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);
const used = async (): Promise<number> => (await ledger.balance('reload', 1e9, new Date())).used;

t.test('a reload changes a price and an upstream for new calls; the call in flight finishes on its own', async (t) => {
  const start = await used();
  before.hold();
  const inFlight = post(url, rpc('eth_blockNumber', [], 'in-flight'));
  await until('the call reached the old upstream', () => before.held === 1);
  writeFileSync(file, JSON.stringify(configWith(after.url, 3)));
  await gateway.reload();

  const fresh = await post(url, rpc('eth_blockNumber', [], 'fresh'));
  t.same(fresh.json, { jsonrpc: '2.0', id: 'fresh', result: await anvil.rpc('eth_blockNumber') });
  t.equal(after.count('eth_blockNumber'), 1, 'the new call went to the new upstream');
  t.equal((await used()) - start, 80 + 3, 'charged the new price; the call in flight was charged before the reload, at the old one');

  before.release();
  const old = await inFlight;
  t.same(old.json, { jsonrpc: '2.0', id: 'in-flight', result: await anvil.rpc('eth_blockNumber') }, 'the call in flight got its answer');
  t.equal(before.count('eth_blockNumber'), 1, 'from the upstream it started with');
  t.equal((await used()) - start, 83, 'and nothing more was charged');
});

t.test('a bad file is refused whole with config check\'s messages; the running config stays', async (t) => {
  const bad = configWith('ftp://10.0.0.9', 1) as unknown as { networks: Array<Record<string, unknown>> };
  bad.networks.push({ name: 'second', families: ['evm'], upstreams: [] });
  writeFileSync(file, JSON.stringify(bad));
  const expected = (await loadConfigFile(file).catch((e: ConfigError) => e)) as ConfigError;
  t.ok(expected instanceof ConfigError, 'config check refuses the file');
  await t.rejects(gateway.reload(), { name: 'ConfigError', message: expected.message });
  t.same(((await gateway.reload().catch((e: ConfigError) => e)) as ConfigError).problems, expected.problems);

  const start = await used();
  const res = await post(url, rpc('eth_blockNumber', []));
  t.equal((res.json as { result: string }).result, await anvil.rpc('eth_blockNumber'));
  t.equal((await used()) - start, 3, 'still the reloaded price');
  t.equal(after.count('eth_blockNumber'), 2, 'still the reloaded upstream');
  t.same(gateway.networks.all.map((n) => n.name), ['eth'], 'no half-applied network');

  // A family's own settings are checked too: a price for a method it does not define.
  writeFileSync(file, JSON.stringify({ ...configWith(after.url, 3), plugins: { admin: { token: TOKEN }, evm: { credits: { eth_nope: 1 } } } }));
  await t.rejects(gateway.reload(), { name: 'ConfigError', message: /plugins\.evm\.credits\.eth_nope: the evm family has no method eth_nope/ });
});

t.test('POST /admin/v1/config/reload: 200 and the new plan, or 400 with the problems', async (t) => {
  const admin = (): ReturnType<typeof post> => post(`${origin}/admin/v1/config/reload`, '', { authorization: `Bearer ${TOKEN}` });
  writeFileSync(file, JSON.stringify(configWith(after.url, 3, { tiny: { dailyCredits: (await used()) + 2, creditsPerSecond: 1_000_000, failover: false } })));
  const ok = await admin();
  t.equal(ok.status, 200);
  t.same(ok.json, { reloaded: true, networks: ['eth'] });
  const refused = await post(url, rpc('eth_blockNumber', []));
  t.equal((refused.json as { error: { code: number } }).error.code, -33000, 'the reloaded plan\'s daily credits (2 left) refuse a call of 3');

  writeFileSync(file, '{ "networks": "none" }');
  const invalid = await admin();
  t.equal(invalid.status, 400);
  const problems = ((await loadConfigFile(file).catch((e: ConfigError) => e)) as ConfigError).problems;
  t.same(invalid.json, { error: { code: 'invalid_config', message: `invalid configuration in ${file}:\n  ${problems.join('\n  ')}`, problems } });
});

t.test('a reload under load: every call answered, each charged the price of the configuration it started on', async (t) => {
  const price = (upstream: string, chainId: number): GatewayConfigInput => ({ ...configWith(upstream, 7), plugins: { admin: { token: TOKEN }, evm: { credits: { eth_chainId: chainId } } } });
  writeFileSync(file, JSON.stringify(price(before.url, 11)));
  await gateway.reload();
  const start = await used();
  const counts = { before: before.count('eth_chainId'), after: after.count('eth_chainId') };
  // eth_chainId: 11 on `before`, 13 on `after`, so the total says which configuration each call met.
  const calls: Array<Promise<unknown>> = [];
  for (let i = 0; i < 60; i++) {
    calls.push(post(url, rpc('eth_chainId', [], i)).then((r) => r.json));
    if (i === 20) {
      writeFileSync(file, JSON.stringify(price(after.url, 13)));
      calls.push(gateway.reload());
    }
  }
  const answers = (await Promise.all(calls)).filter((a) => typeof a === 'object' && a !== null && 'jsonrpc' in a) as Array<{ result?: string }>;
  t.equal(answers.length, 60);
  t.ok(answers.every((a) => a.result === '0x7a69'), 'every call answered');
  const onBefore = before.count('eth_chainId') - counts.before;
  const onAfter = after.count('eth_chainId') - counts.after;
  t.equal(onBefore + onAfter, 60);
  t.ok(onAfter > 0, `calls after the reload went to the new upstream (${onBefore} before, ${onAfter} after)`);
  t.equal((await used()) - start, onBefore * 11 + onAfter * 13, 'each call charged the price of the configuration it started on');
});
