import t from 'tap';
import { request } from 'undici';
import { verifySecret } from '../core/store-api.js';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { ledgerSqlite } from '../plugins/ledger-sqlite/index.js';
import { admin } from '../plugins/admin/index.js';
import { startTestGateway } from './helpers/gateway.js';
import { post, rpc } from './helpers/json-rpc.js';
import { startTinyUpstream } from './helpers/tiny-upstream.js';

const TOKEN = 'admin-token-for-tests-0123456789';
const upstream = await startTinyUpstream();
t.teardown(() => upstream.close());
const sqlite = ledgerSqlite({ path: ':memory:' });
const gw = await startTestGateway(
  {
    keys: [{ key: 'admin-config-key-0001', id: 'from-config', plan: 'core' }],
    networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url }] }],
    plugins: { admin: { token: TOKEN } },
  },
  [sqlite, admin(), httpTransport(), evmFamily()],
);
t.teardown(() => gw.close());
const base = `${gw.origin}/admin/v1`;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
}

async function call(method: string, path: string, body?: unknown, token: string | null = TOKEN, scheme = 'Bearer'): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token !== null) headers.authorization = `${scheme} ${token}`;
  const res = await request(`${base}${path}`, { method: method as 'GET', headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
}

t.test('every admin route refuses a request without the admin credential', async (t) => {
  const routes: Array<[string, string, unknown?]> = [
    ['GET', '/keys'],
    ['POST', '/keys', { plan: 'growth' }],
    ['GET', '/keys/from-config'],
    ['PATCH', '/keys/from-config', { plan: 'team' }],
    ['POST', '/keys/x/rotate'],
    ['POST', '/keys/x/revoke'],
    ['DELETE', '/keys/x'],
    ['GET', '/keys/x/usage'],
    ['GET', '/plans'],
    ['POST', '/plans', { name: 'gold', dailyCredits: 1, creditsPerSecond: 1 }],
    ['PATCH', '/plans/gold', { dailyCredits: 2 }],
    ['DELETE', '/plans/gold'],
    ['GET', '/usage/export'],
    ['GET', '/upstreams'],
    ['GET', '/nothing-here'],
  ];
  const credentials: Array<[string, string | null, string?]> = [
    ['no Authorization header', null],
    ['a wrong token', 'admin-token-for-tests-0123456780'],
    ['a prefix of the token', TOKEN.slice(0, -1)],
    ['the token with another scheme', TOKEN, 'Basic'],
    ['an API key', 'admin-config-key-0001'],
  ];
  for (const [what, token, scheme] of credentials) {
    for (const [method, path, body] of routes) {
      const res = await call(method, path, body, token, scheme);
      t.equal(res.status, 401, `${method} ${path} with ${what}`);
      t.same(res.body, { error: { code: 'unauthorized', message: 'send the admin token: Authorization: Bearer <token>' } });
      t.match(res.headers['www-authenticate'], /^Bearer/);
    }
  }
  t.same(sqlite.store.keys.list(), [], 'nothing was created');
  t.same(sqlite.store.plans.list(), [], 'no plan either');
});

t.test('keys: create, use, list, plan, rotate, revoke; only hashes are stored', async (t) => {
  const created = await call('POST', '/keys', { plan: 'growth', id: 'acme', label: 'Acme Corp' });
  t.equal(created.status, 201);
  const { apiKey, secret, key } = created.body as { apiKey: string; secret: string; key: Record<string, unknown> };
  t.match(apiKey, /^tg_[A-Za-z0-9_-]{32}$/);
  t.ok(secret.length >= 32);
  t.match(key, { id: 'acme', plan: 'growth', label: 'Acme Corp', keyHint: `…${apiKey.slice(-4)}`, hasSecret: true, source: 'store' });
  t.equal(created.headers['cache-control'], 'no-store');

  t.equal((await post(gw.url('eth', apiKey), rpc('eth_blockNumber', []))).status, 200, 'the new key works at once');
  const dump = JSON.stringify(sqlite.store.db.prepare('SELECT * FROM keys').all());
  t.notMatch(dump, apiKey, 'the API key is not in the database');
  t.notMatch(dump, secret, 'nor the secret');
  const stored = sqlite.store.keys.get('acme')!;
  t.ok(await verifySecret(secret, stored.secretHash!), 'the secret is stored as its scrypt hash');
  t.notOk(await verifySecret(`${secret}x`, stored.secretHash!));

  const list = await call('GET', '/keys');
  t.same((list.body.keys as Array<{ id: string; source: string }>).map((k) => [k.id, k.source]), [['from-config', 'config'], ['acme', 'store']]);
  t.notMatch(JSON.stringify(list.body), apiKey);
  t.notMatch(JSON.stringify(list.body), /keyHash|secretHash|scrypt/);

  t.equal((await call('POST', '/keys', { plan: 'growth', id: 'acme' })).status, 409, 'ids are unique');
  t.equal((await call('POST', '/keys', { plan: 'growth', id: 'from-config' })).status, 409, 'also against the config file');
  t.equal((await call('POST', '/keys', { plan: 'platinum' })).status, 400, 'plans must exist');
  t.equal((await call('POST', '/keys', {})).status, 400, 'a plan is required');
  t.equal((await call('POST', '/keys', { plan: 'growth', id: 'no spaces' })).status, 400);

  const moved = await call('PATCH', '/keys/acme', { plan: 'core' });
  t.equal((moved.body.key as { plan: string }).plan, 'core', 'plans are assigned');
  t.equal((await call('PATCH', '/keys/acme', { plan: 'platinum' })).status, 400);
  t.equal((await call('PATCH', '/keys/from-config', { plan: 'team' })).status, 409, 'config keys are read-only');
  const one = await call('GET', '/keys/acme');
  t.match(one.body, { key: { id: 'acme', plan: 'core' }, balance: { dailyCredits: 6_000_000, used: 80, remaining: 6_000_000 - 80 } });

  const rotated = await call('POST', '/keys/acme/rotate');
  t.equal(rotated.status, 200);
  const fresh = (rotated.body as { apiKey: string }).apiKey;
  t.not(fresh, apiKey);
  t.equal((await post(gw.url('eth', apiKey), rpc('eth_blockNumber', []))).status, 401, 'the old API key stops working');
  t.equal((await post(gw.url('eth', fresh), rpc('eth_blockNumber', []))).status, 200, 'the new one works');
  t.match((await call('GET', '/keys/acme')).body, { balance: { used: 160 } }, 'the balance stays with the key');

  const revoked = await call('POST', '/keys/acme/revoke');
  t.ok((revoked.body.key as { revokedAt?: string }).revokedAt);
  t.equal((await post(gw.url('eth', fresh), rpc('eth_blockNumber', []))).status, 401, 'a revoked key is refused');
  t.equal((await call('POST', '/keys/acme/rotate')).status, 409, 'and cannot be rotated back to life');
  t.equal((await call('DELETE', '/keys/acme')).status, 200, 'revoking twice is harmless');
  t.equal((await call('GET', '/keys/nobody')).status, 404);
});

t.test('usage per key, day and method', async (t) => {
  const { apiKey } = (await call('POST', '/keys', { plan: 'growth', id: 'metered' })).body as { apiKey: string };
  for (let i = 0; i < 3; i++) await post(gw.url('eth', apiKey), rpc('eth_blockNumber', []));
  await post(gw.url('eth', apiKey), rpc('eth_chainId', []));
  await post(gw.url('eth', apiKey), rpc('eth_getBlockByNumber', ['nope', false]));
  const usage = await call('GET', '/keys/metered/usage');
  t.equal(usage.status, 200);
  const [today] = (usage.body as { days: Array<{ day: string; balanceUsed: number; methods: Record<string, unknown>; total: Record<string, number> }> }).days;
  t.same(today!.methods, {
    eth_blockNumber: { calls: 3, credits: 240, bytes: today!.methods.eth_blockNumber && (today!.methods.eth_blockNumber as { bytes: number }).bytes, failed: 0 },
    eth_chainId: { calls: 1, credits: 5, bytes: (today!.methods.eth_chainId as { bytes: number }).bytes, failed: 0 },
    eth_getBlockByNumber: { calls: 1, credits: 0, bytes: 0, failed: 1 },
  });
  t.match(today, { balanceUsed: 245, total: { calls: 5, credits: 245, failed: 1 } });
  t.same(usage.body.storage, { bytes: 0, pins: 0 }, 'a key that pinned nothing stores 0 bytes');
  const range = await call('GET', `/keys/metered/usage?from=2020-01-01&to=2020-01-03`);
  t.same((range.body as { days: Array<{ day: string }> }).days.map((d) => d.day), ['2020-01-01', '2020-01-02', '2020-01-03']);
  t.equal((await call('GET', '/keys/metered/usage?day=yesterday')).status, 400);
  t.equal((await call('GET', '/keys/metered/usage?from=2020-01-01&to=2021-01-01')).status, 400, 'ranges are bounded');
  t.equal((await call('GET', '/keys/from-config/usage')).status, 200, 'config keys have usage too');
});

t.test('plans and upstream status', async (t) => {
  t.match((await call('GET', '/plans')).body, { plans: { growth: { dailyCredits: 200_000_000 } } });
  const upstreams = await call('GET', '/upstreams');
  t.equal(upstreams.status, 200);
  t.ok(Array.isArray(upstreams.body.upstreams), 'the selector status, as a list');
  t.equal((await call('POST', '/upstreams')).status, 405);
});

t.test('without a token the admin API is off', async (t) => {
  const off = await startTestGateway(
    { networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url }] }] },
    [ledgerSqlite({ path: ':memory:' }), admin(), httpTransport(), evmFamily()],
  );
  t.teardown(() => off.close());
  const res = await post(`${off.origin}/admin/v1/keys`, '', { authorization: `Bearer ${TOKEN}` }, 'GET');
  t.equal(res.status, 404, 'its routes do not exist');
});
