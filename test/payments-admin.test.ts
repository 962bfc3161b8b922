import 'reflect-metadata';
import t from 'tap';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { loadConfigFile } from '../core/index.js';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { ledgerSqlite } from '../plugins/ledger-sqlite/index.js';
import { ledgerRedis } from '../plugins/ledger-redis/index.js';
import { admin } from '../plugins/admin/index.js';
import {
  MemoryPaymentJournal,
  RedisPaymentJournal,
  SqlitePaymentJournal,
  payments,
  paymentIdOf,
  type PaymentJournal,
  type PaymentPayload,
  type PaymentRequirements,
  type SettlingPayment,
} from '../plugins/payments/index.js';
import { applyStoreFlags } from '../examples/gateway/store-flags.js';
import { parseCli } from '../examples/gateway/cli.js';
import { runCommand } from '../examples/gateway/store-commands.js';
import { startTestGateway } from './helpers/gateway.js';
import { redisAvailable, startRedisServer } from './helpers/redis-server.js';

// Where the payment journal lives (the store the gateway loaded, or the config's choice), and the
// payments it holds listed by key and by wallet: the admin API and the CLI.

if (!(await redisAvailable())) {
  t.fail('redis-server is not installed (apt-get install redis-server); the Redis journal tests need it');
  process.exit(1);
}
const redis = await startRedisServer();
t.teardown(() => redis.stop());

const TOKEN = 'admin-token-for-tests-0123456789';
const NETWORK = 'eip155:8453';
const ASSET = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
const PAY_TO = `0x${'ab'.repeat(20)}`;
const WALLET = `0x${'Cd'.repeat(20)}`;
const OTHER_WALLET = `0x${'9e'.repeat(20)}`;
const OFFER = { credits: 5_000, price: '1000000', asset: ASSET, network: NETWORK, payTo: PAY_TO, name: 'USD Coin', version: '2' };
const NETWORKS = [{ name: 'eth', families: ['evm'], upstreams: [{ url: 'http://127.0.0.1:9' }] }];
const SETTINGS = { offers: { pro: [OFFER] }, facilitator: { url: { url: 'http://127.0.0.1:9' } } };
const REQUIREMENTS: PaymentRequirements = { scheme: 'exact', network: NETWORK, asset: ASSET, amount: '1000000', payTo: PAY_TO, maxTimeoutSeconds: 300, extra: { name: 'USD Coin', version: '2' } };
const SIGNATURE = `0x${'5a'.repeat(65)}`;

let serial = 0;
function settling(keyId: string, payer: string, startedAt: number): SettlingPayment {
  const nonce = `0x${(++serial).toString(16).padStart(64, '0')}`;
  const payload = { x402Version: 2, accepted: REQUIREMENTS, payload: { signature: SIGNATURE, authorization: { from: payer, to: PAY_TO, value: '1000000', validAfter: '0', validBefore: '2000000000', nonce } } } as unknown as PaymentPayload;
  return {
    id: paymentIdOf(NETWORK, ASSET, payer, nonce), keyId, plan: 'pro', credits: 5_000, payer, network: NETWORK, asset: ASSET, amount: '1000000', payTo: PAY_TO,
    nonce, validBefore: 2_000_000_000, payload, requirements: REQUIREMENTS, startedAt,
  };
}

/** Three payments: acme's two (one credited, one failed) by WALLET, and globex's one by OTHER_WALLET, credited. */
async function fill(journal: PaymentJournal): Promise<SettlingPayment[]> {
  const made = [settling('acme', WALLET, Date.UTC(2026, 10, 1)), settling('acme', WALLET, Date.UTC(2026, 10, 2)), settling('globex', OTHER_WALLET, Date.UTC(2026, 10, 3))];
  for (const p of made) await journal.begin(p);
  await journal.markSettled(made[0]!.id, `0x${'11'.repeat(32)}`, Date.UTC(2026, 10, 1, 0, 1));
  await journal.markCredited(made[0]!.id, Date.UTC(2026, 10, 1, 0, 2));
  await journal.markFailed(made[1]!.id, 'transaction_failed', Date.UTC(2026, 10, 2, 0, 1));
  await journal.markSettled(made[2]!.id, `0x${'22'.repeat(32)}`, Date.UTC(2026, 10, 3, 0, 1));
  await journal.markCredited(made[2]!.id, Date.UTC(2026, 10, 3, 0, 2));
  return made;
}

t.test('the journal is kept in the store the gateway loaded, unless the config says otherwise', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-pay-journal-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const start = async (store: 'sqlite' | 'redis' | 'none', settings: object = {}) => {
    const plugin = payments();
    const storePlugins = store === 'sqlite' ? [ledgerSqlite({ path: join(dir, `${serial++}.db`) })] : store === 'redis' ? [ledgerRedis({ url: redis.url, prefix: 'choice:' })] : [];
    const gw = await startTestGateway({ networks: NETWORKS, plugins: { payments: { ...SETTINGS, ...settings } } }, [...storePlugins, plugin, httpTransport(), evmFamily()]);
    t.teardown(() => gw.close());
    return plugin.desk.journal;
  };
  t.type(await start('sqlite'), SqlitePaymentJournal, 'SQLite store: SQLite journal');
  t.type(await start('none'), MemoryPaymentJournal, 'no store: in memory');
  t.type(await start('sqlite', { journal: 'memory' }), MemoryPaymentJournal, 'journal: memory');
  const first = await start('redis');
  t.type(first, RedisPaymentJournal, 'Redis store: Redis journal');
  const second = await start('redis');
  const p = settling('acme', WALLET, 1);
  t.equal(await first.begin(p), true);
  t.match(await second.get(p.id), { state: 'settling' }, 'two instances on one Redis share the journal');
  t.equal(await second.begin(p), false);
  await t.rejects(start('none', { journal: 'redis' }), /plugins\.payments\.journal: redis needs the Redis store/);
  await t.rejects(start('none', { journal: 'disk' }), /plugins\.payments\.journal: must be (one of memory, sqlite, redis|memory, sqlite or redis)/);
});

t.test('admin API: a key\'s payments, a wallet\'s payments', async (t) => {
  const plugin = payments();
  const gw = await startTestGateway(
    { keys: [{ key: 'acme-config-key-00001', id: 'acme', plan: 'core' }, { key: 'globex-config-key-0001', id: 'globex', plan: 'core' }], networks: NETWORKS, plugins: { admin: { token: TOKEN }, payments: SETTINGS } },
    [ledgerSqlite({ path: ':memory:' }), plugin, admin(), httpTransport(), evmFamily()],
  );
  t.teardown(() => gw.close());
  const made = await fill(plugin.desk.journal);
  const get = async (path: string): Promise<{ status: number; body: Record<string, unknown>; text: string }> => {
    const res = await request(`${gw.origin}/admin/v1${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const text = await res.body.text();
    return { status: res.statusCode, body: JSON.parse(text) as Record<string, unknown>, text };
  };

  const acme = await get('/keys/acme/payments');
  t.equal(acme.status, 200);
  t.same(acme.body, {
    id: 'acme',
    takesPayments: true,
    payments: [
      {
        id: made[1]!.id, keyId: 'acme', plan: 'pro', credits: 5_000, state: 'failed', payer: WALLET, network: NETWORK, asset: ASSET, amount: '1000000', payTo: PAY_TO,
        transaction: null, startedAt: '2026-11-02T00:00:00.000Z', settledAt: '2026-11-02T00:01:00.000Z', creditedAt: null, failure: 'transaction_failed',
      },
      {
        id: made[0]!.id, keyId: 'acme', plan: 'pro', credits: 5_000, state: 'credited', payer: WALLET, network: NETWORK, asset: ASSET, amount: '1000000', payTo: PAY_TO,
        transaction: `0x${'11'.repeat(32)}`, startedAt: '2026-11-01T00:00:00.000Z', settledAt: '2026-11-01T00:01:00.000Z', creditedAt: '2026-11-01T00:02:00.000Z', failure: null,
      },
    ],
  });
  t.notMatch(acme.text, SIGNATURE.slice(2, 20), 'the signed authorization is never shown');
  t.same((await get('/keys/acme/payments?limit=1')).body.payments, [(acme.body.payments as unknown[])[0]]);

  const wallet = await get(`/payments?wallet=${OTHER_WALLET.toUpperCase().replace('0X', '0x')}`);
  t.equal(wallet.status, 200);
  t.same((wallet.body.payments as Array<{ id: string }>).map((p) => p.id), [made[2]!.id], 'by wallet, any case');
  t.same((await get(`/payments?wallet=${WALLET}&key=globex`)).body.payments, [], 'by wallet and key');
  t.same(((await get('/payments?key=acme')).body.payments as unknown[]).length, 2);
  t.match(await get('/payments?wallet=0x12'), { status: 400, body: { error: { code: 'bad_request', message: /wallet: must be an address/ } } });
  t.match(await get('/payments'), { status: 400, body: { error: { code: 'bad_request' } } });
  t.match(await get('/keys/acme/payments?limit=0'), { status: 400, body: { error: { message: /limit/ } } });
  t.match(await get('/keys/nobody/payments'), { status: 404 });
  const unauthenticated = await request(`${gw.origin}/admin/v1/payments?wallet=${WALLET}`);
  t.equal(unauthenticated.statusCode, 401);
  await unauthenticated.body.dump();

  const off = await startTestGateway({ keys: [{ key: 'acme-config-key-00001', id: 'acme', plan: 'core' }], networks: NETWORKS, plugins: { admin: { token: TOKEN } } }, [ledgerSqlite({ path: ':memory:' }), admin(), httpTransport(), evmFamily()]);
  t.teardown(() => off.close());
  const res = await request(`${off.origin}/admin/v1/keys/acme/payments`, { headers: { authorization: `Bearer ${TOKEN}` } });
  t.equal(res.statusCode, 200);
  t.same(await res.body.json(), { id: 'acme', takesPayments: false, payments: [] }, 'a gateway without the payments plugin says so');
});

t.test('CLI: tollgate keys payments <id> and tollgate payments --wallet read the journal in the gateway\'s store', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-cli-payments-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const configFile = join(dir, 'gateway.yaml');
  await writeFile(configFile, ['networks:', '  - name: eth', '    families: [evm]', '    upstreams:', '      - url: http://127.0.0.1:9', ''].join('\n'));
  const command = async (args: string[]): Promise<{ code: number; stdout: string; stderr: string }> => {
    const cli = parseCli([...args, '--config', configFile, '--data-dir', dir]);
    const config = await loadConfigFile(configFile);
    applyStoreFlags(config, cli, {});
    let stdout = '';
    let stderr = '';
    const code = await runCommand(cli, config, { out: (s) => void (stdout += s), err: (s) => void (stderr += s) });
    return { code, stdout, stderr };
  };
  t.equal((await command(['keys', 'create', '--plan', 'core', '--id', 'acme'])).code, 0);
  t.equal((await command(['keys', 'create', '--plan', 'core', '--id', 'globex'])).code, 0);
  t.same(await command(['keys', 'payments', 'acme']), { code: 0, stdout: 'key acme: no payments\n', stderr: '' });

  // What a gateway on this store records: its journal in the store's file.
  const plugin = payments();
  const gw = await startTestGateway({ networks: NETWORKS, plugins: { payments: SETTINGS } }, [ledgerSqlite({ path: join(dir, 'tollgate.db') }), plugin, httpTransport(), evmFamily()]);
  const made = await fill(plugin.desk.journal);
  await gw.close();

  const byKey = await command(['keys', 'payments', 'acme']);
  t.equal(byKey.code, 0, byKey.stderr);
  t.equal(byKey.stdout, [
    'key acme: 2 payments, newest first',
    `  2026-11-02T00:00:00.000Z  failed    5000 credits  1000000 of ${ASSET} on ${NETWORK}  key acme  from ${WALLET}  transaction_failed`,
    `  2026-11-01T00:00:00.000Z  credited  5000 credits  1000000 of ${ASSET} on ${NETWORK}  key acme  from ${WALLET}  0x${'11'.repeat(32)}`,
    '',
  ].join('\n'));
  const json = await command(['keys', 'payments', 'globex', '--json']);
  t.match(JSON.parse(json.stdout), { id: 'globex', payments: [{ id: made[2]!.id, state: 'credited', payer: OTHER_WALLET }] });
  const byWallet = await command(['payments', '--wallet', WALLET.toLowerCase(), '--json']);
  t.equal(byWallet.code, 0, byWallet.stderr);
  t.same((JSON.parse(byWallet.stdout) as { payments: Array<{ id: string }> }).payments.map((p) => p.id), [made[1]!.id, made[0]!.id]);
  t.match(await command(['payments', '--wallet', 'me']), { code: 2, stderr: /--wallet "me" is not an address/ });
  t.match(await command(['payments']), { code: 2, stderr: /expected --wallet/ });
  t.match(await command(['keys', 'payments', 'nobody']), { code: 1, stderr: /nobody/ });
});
