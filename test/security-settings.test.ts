import t, { type Test } from 'tap';
import { request } from 'undici';
import { SignJWT, exportSPKI, generateKeyPair, type JWTPayload } from 'jose';
import { httpTransport } from '../plugins/http/index.js';
import { wsTransport } from '../plugins/ws/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { devnet } from '@tollgate/devnet';
import { ledgerSqlite } from '../plugins/ledger-sqlite/index.js';
import { admin } from '../plugins/admin/index.js';
import { security } from '../plugins/security/index.js';
import { startTestGateway } from './helpers/gateway.js';
import { post, rpc, type RawAnswer } from './helpers/json-rpc.js';
import { openWs } from './helpers/ws-client.js';

// The security plugin's key secret, network toggles and JWT, on managed keys whose settings are set
// through the admin API, over HTTP and WebSocket against an Anvil devnet.

const TOKEN = 'security-admin-token-0123456789';
const FIRST = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
const SECOND = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const gw = await startTestGateway(
  {
    networks: [
      { name: 'eth', families: ['evm'], upstreams: [{ embedded: 'anvil' }] },
      { name: 'eth-b', families: ['evm'], upstreams: [{ embedded: 'anvil' }] },
    ],
    plugins: { admin: { token: TOKEN } },
  },
  [ledgerSqlite({ path: ':memory:' }), admin(), httpTransport(), wsTransport(), evmFamily(), security(), devnet()],
);
t.teardown(() => gw.close());

async function adminCall(method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await request(`${gw.origin}/admin/v1${path}`, {
    method: method as 'GET',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
}

interface Issued {
  id: string;
  apiKey: string;
  secret: string;
}

async function createKey(id: string, settings?: unknown): Promise<Issued> {
  const created = await adminCall('POST', '/keys', { plan: 'growth', id });
  const { apiKey, secret } = created.body as { apiKey: string; secret: string };
  if (settings !== undefined) {
    const put = await adminCall('PUT', `/keys/${id}/settings/security`, settings);
    if (put.status !== 200) throw new Error(`settings of ${id}: ${put.status} ${JSON.stringify(put.body)}`);
  }
  return { id, apiKey, secret };
}

const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

function call(key: Issued, method: string, params: unknown[] = [], headers: Record<string, string> = {}, network = 'eth'): Promise<RawAnswer> {
  return post(gw.url(network, key.apiKey), rpc(method, params), { 'content-type': 'application/json', ...headers });
}

/** The refusal's parts: HTTP 403, code -33100, and the setting and fix in the message and in error.data. */
function refused(t: Test, res: RawAnswer, reason: string, setting: string, what = reason): void {
  const error = (res.json as { error?: { code: number; message: string; data?: { setting: string; fix: string } } }).error;
  t.equal(res.status, 403, `${what}: HTTP 403`);
  t.equal(error?.code, -33100, `${what}: FORBIDDEN`);
  t.equal(error?.data?.setting, setting, `${what}: names the setting ${setting}`);
  t.equal(error?.message, `${reason}; fix: ${error?.data?.fix ?? '(none)'}`, `${what}: the reason, then the fix`);
  t.ok((error?.data?.fix.length ?? 0) > 10, `${what}: says how to fix it`);
}

function served(t: Test, res: RawAnswer, what: string): void {
  t.equal(res.status, 200, `${what}: HTTP 200 (${res.text.slice(0, 160)})`);
  t.ok(res.json !== undefined && 'result' in (res.json as object), `${what}: a result`);
}

async function used(id: string): Promise<number> {
  return ((await adminCall('GET', `/keys/${id}`)).body as { balance: { used: number } }).balance.used;
}

t.test('the admin API checks and stores a key\'s security settings section', async (t) => {
  const key = await createKey('sections');
  const bad = await adminCall('PUT', '/keys/sections/settings/security', { origins: ['https://x.test/path'], networks: { eth: 'no' }, colour: 'red' });
  t.equal(bad.status, 400);
  t.match((bad.body as { error: { message: string } }).error.message, /settings\.security\.colour: is not a known field/);
  t.match((bad.body as { error: { message: string } }).error.message, /settings\.security\.networks\.eth: must be true or false/);
  t.match((bad.body as { error: { message: string } }).error.message, /settings\.security\.origins\[0\]: must be an origin/);
  const badCreate = await adminCall('POST', '/keys', { plan: 'growth', settings: { security: { addresses: ['0x12'] } } });
  t.equal(badCreate.status, 400, 'create checks the section too');
  t.equal((await adminCall('PUT', '/keys/sections/settings/security', { methods: ['eth_chainId'] })).status, 200);
  t.same((await adminCall('GET', '/keys/sections/settings/security')).body, { id: 'sections', section: 'security', value: { methods: ['eth_chainId'] } });
  refused(t, await call(key, 'eth_blockNumber'), 'method not allowed: eth_blockNumber', 'methods', 'the stored list applies at once');
  t.equal((await adminCall('DELETE', '/keys/sections/settings/security')).status, 200);
  served(t, await call(key, 'eth_blockNumber'), 'the section removed, nothing is restricted');
});

t.test('key secret: required, wrong, right, and only with an empty user', async (t) => {
  const key = await createKey('secret', { requireSecret: true });
  refused(t, await call(key, 'eth_blockNumber'), 'key secret required', 'requireSecret', 'no secret');
  refused(t, await call(key, 'eth_blockNumber', [], { authorization: basic('', 'not-the-secret') }), 'key secret does not match', 'requireSecret', 'a wrong secret');
  refused(t, await call(key, 'eth_blockNumber', [], { authorization: basic('someone', key.secret) }), 'key secret required', 'requireSecret', 'a basic user is not the empty user');
  served(t, await call(key, 'eth_blockNumber', [], { authorization: basic('', key.secret) }), 'the right secret');
  served(t, await call(key, 'eth_blockNumber', [], { authorization: basic('', key.secret) }), 'the right secret again (remembered)');

  const ws = await openWs(gw.url('eth', key.apiKey).replace('http:', 'ws:').replace('/v3/', '/ws/v3/'), { headers: { authorization: basic('', key.secret) } });
  const bare = await openWs(gw.url('eth', key.apiKey).replace('http:', 'ws:').replace('/v3/', '/ws/v3/'));
  t.teardown(() => { ws.close(); bare.close(); });
  ws.send(rpc('eth_chainId'));
  bare.send(rpc('eth_chainId'));
  const [withSecret] = await ws.waitFor(1);
  const [without] = await bare.waitFor(1);
  t.ok('result' in (withSecret as object), 'WebSocket: the upgrade request carries the secret');
  t.match((without as { error: { data: { setting: string } } }).error, { code: -33100, data: { setting: 'requireSecret' } }, 'WebSocket without it: refused');
});

t.test('the key secret skips the allowlists only when the key allows it', async (t) => {
  const skipping = await createKey('skipping', { methods: ['eth_chainId'], origins: ['https://app.example.com'], secretSkipsAllowlists: true });
  const strict = await createKey('strict', { methods: ['eth_chainId'], origins: ['https://app.example.com'] });
  const auth = (key: Issued): Record<string, string> => ({ authorization: basic('', key.secret) });
  refused(t, await call(skipping, 'eth_blockNumber', [], { origin: 'https://app.example.com' }), 'method not allowed: eth_blockNumber', 'methods', 'without the secret');
  served(t, await call(skipping, 'eth_blockNumber', [], auth(skipping)), 'with the secret: methods and origins skipped');
  refused(t, await call(skipping, 'eth_blockNumber', [], { authorization: basic('', 'wrong-secret') }), 'key secret does not match', 'requireSecret', 'a wrong secret is never ignored');
  refused(t, await call(strict, 'eth_blockNumber', [], { ...auth(strict), origin: 'https://app.example.com' }), 'method not allowed: eth_blockNumber', 'methods', 'a key that does not allow skipping');
  refused(t, await call(strict, 'eth_chainId', [], auth(strict)), 'origin not allowed: the request has no Origin header', 'origins', 'types are ANDed');
  served(t, await call(strict, 'eth_chainId', [], { ...auth(strict), origin: 'https://app.example.com' }), 'every list passes');
});

t.test('network toggles', async (t) => {
  const key = await createKey('networks', { networks: { 'eth-b': false, eth: true } });
  served(t, await call(key, 'eth_chainId', [], {}, 'eth'), 'a network turned on');
  refused(t, await call(key, 'eth_chainId', [], {}, 'eth-b'), 'network disabled for this key: eth-b', 'networks', 'a network turned off');
  const before = await used('networks');
  refused(t, await call(key, 'eth_gasPrice', [], {}, 'eth-b'), 'network disabled for this key: eth-b', 'networks');
  t.equal(await used('networks'), before, 'a refused call costs nothing');
});

t.test('JWT: RS256 and ES256 keys, kid, aud, exp, nbf, signature, narrowing claims', async (t) => {
  const rsa = await generateKeyPair('RS256');
  const ec = await generateKeyPair('ES256');
  const stranger = await generateKeyPair('RS256');
  const key = await createKey('jwt', {
    jwt: {
      audience: 'tollgate-tests',
      keys: [
        { kid: 'rsa-1', alg: 'RS256', publicKey: await exportSPKI(rsa.publicKey) },
        { kid: 'ec-1', alg: 'ES256', publicKey: await exportSPKI(ec.publicKey) },
      ],
    },
  });
  const now = Math.floor(Date.now() / 1000);
  const sign = (claims: JWTPayload, kid: string, alg = 'RS256', privateKey = rsa.privateKey): Promise<string> =>
    new SignJWT(claims).setProtectedHeader({ alg, kid }).setIssuedAt(now).sign(privateKey);
  const valid = { aud: 'tollgate-tests', exp: now + 600 };
  const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

  served(t, await call(key, 'eth_blockNumber', [], bearer(await sign(valid, 'rsa-1'))), 'RS256');
  served(t, await call(key, 'eth_blockNumber', [], bearer(await sign(valid, 'ec-1', 'ES256', ec.privateKey))), 'ES256');
  refused(t, await call(key, 'eth_blockNumber'), 'JWT required', 'jwt', 'no token');
  refused(t, await call(key, 'eth_blockNumber', [], bearer(await sign({ ...valid, exp: now - 60 }, 'rsa-1'))), 'JWT expired', 'jwt', 'expired');
  refused(t, await call(key, 'eth_blockNumber', [], bearer(await sign({ ...valid, nbf: now + 3600 }, 'rsa-1'))), 'JWT not valid yet', 'jwt', 'nbf in the future');
  refused(t, await call(key, 'eth_blockNumber', [], bearer(await sign({ ...valid, aud: 'someone-else' }, 'rsa-1'))), 'JWT audience not accepted', 'jwt.audience', 'wrong aud');
  refused(t, await call(key, 'eth_blockNumber', [], bearer(await sign(valid, 'rsa-9'))), 'JWT "kid" is not one of the key\'s public keys: rsa-9', 'jwt.keys', 'unknown kid');
  refused(t, await call(key, 'eth_blockNumber', [], bearer(await sign(valid, 'rsa-1', 'RS256', stranger.privateKey))), 'JWT signature does not verify', 'jwt.keys', 'signed by another key');
  refused(t, await call(key, 'eth_blockNumber', [], bearer(await sign(valid, 'ec-1'))), 'JWT algorithm not allowed', 'jwt.keys', 'RS256 under the ES256 key');
  refused(t, await call(key, 'eth_blockNumber', [], bearer('not.a.jwt')), 'JWT malformed', 'jwt', 'garbage');

  const narrowed = bearer(await sign({ ...valid, methods: ['eth_getBalance', 'eth_chainId'], addresses: [SECOND], origins: ['https://*.example.com'] }, 'rsa-1'));
  const fromApp = { ...narrowed, origin: 'https://app.example.com' };
  served(t, await call(key, 'eth_getBalance', [SECOND, 'latest'], fromApp), 'within every claim');
  refused(t, await call(key, 'eth_blockNumber', [], fromApp), 'method not allowed by the JWT: eth_blockNumber', 'jwt.methods', 'a method outside the claim');
  refused(t, await call(key, 'eth_getBalance', [FIRST, 'latest'], fromApp), `contract address not allowed by the JWT: ${FIRST}`, 'jwt.addresses', 'an address outside the claim');
  refused(t, await call(key, 'eth_chainId', [], { ...narrowed, origin: 'https://evil.test' }), 'origin not allowed by the JWT: https://evil.test', 'jwt.origins', 'an origin outside the claim');

  const wsUrl = gw.url('eth', key.apiKey).replace('http:', 'ws:').replace('/v3/', '/ws/v3/');
  const ws = await openWs(wsUrl, { headers: fromApp });
  t.teardown(() => ws.close());
  ws.send(rpc('eth_getBalance', [SECOND, 'latest'], 1));
  ws.send(rpc('eth_blockNumber', [], 2));
  const answers = (await ws.waitFor(2)) as Array<{ id: number; result?: string; error?: { code: number; data: { setting: string } } }>;
  const byId = new Map(answers.map((a) => [a.id, a]));
  t.type(byId.get(1)!.result, 'string', 'WebSocket: the upgrade request\'s token allows what its claims name');
  t.match(byId.get(2)!.error, { code: -33100, data: { setting: 'jwt.methods' } }, 'WebSocket: and narrows the rest');
  const expired = await openWs(wsUrl, { headers: bearer(await sign({ ...valid, exp: now - 1 }, 'rsa-1')) });
  t.teardown(() => expired.close());
  expired.send(rpc('eth_chainId'));
  t.match((await expired.waitFor(1))[0], { error: { code: -33100, data: { setting: 'jwt' } } }, 'WebSocket: an expired token is refused');
});

t.test('JWT settings: at most three keys, distinct kids, PEM keys, and not both JWT and a required secret', async (t) => {
  await createKey('jwt-bad');
  const pem = await exportSPKI((await generateKeyPair('ES256')).publicKey);
  const keys = ['a', 'b', 'c', 'd'].map((kid) => ({ kid, alg: 'ES256', publicKey: pem }));
  const tooMany = await adminCall('PUT', '/keys/jwt-bad/settings/security', { jwt: { keys } });
  t.equal(tooMany.status, 400);
  t.match((tooMany.body as { error: { message: string } }).error.message, 'settings.security.jwt.keys: must be an array of 1 to 3 public keys');
  // Distinct kids are checked once the settings' shape is right (a schema cannot say it).
  const twice = await adminCall('PUT', '/keys/jwt-bad/settings/security', { jwt: { keys: [keys[0], keys[0]] } });
  t.equal(twice.status, 400);
  t.match((twice.body as { error: { message: string } }).error.message, 'settings.security.jwt.keys[1].kid: "a" is used twice');
  const both = await adminCall('PUT', '/keys/jwt-bad/settings/security', { jwt: { keys: [keys[0]] }, requireSecret: true });
  t.equal(both.status, 400);
  t.match((both.body as { error: { message: string } }).error.message, 'settings.security: requireSecret and a required jwt cannot both be on');
  t.equal((await adminCall('PUT', '/keys/jwt-bad/settings/security', { jwt: { keys: [keys[0]], required: false }, requireSecret: true })).status, 200, 'an optional jwt beside a required secret is fine');
  const notPem = await adminCall('PUT', '/keys/jwt-bad/settings/security', { jwt: { keys: [{ kid: 'x', alg: 'HS256', publicKey: 'secret' }] } });
  t.match((notPem.body as { error: { message: string } }).error.message, 'settings.security.jwt.keys[0].alg: must be RS256 or ES256');
  t.match((notPem.body as { error: { message: string } }).error.message, 'settings.security.jwt.keys[0].publicKey: must be a PEM public key');
});

t.test('over WebSocket: network toggles and each JWT refusal, with the upgrade request\'s headers', async (t) => {
  const rsa = await generateKeyPair('RS256');
  const stranger = await generateKeyPair('RS256');
  const key = await createKey('ws-checks', {
    networks: { 'eth-b': false },
    jwt: { audience: 'tollgate-tests', keys: [{ kid: 'rsa-1', alg: 'RS256', publicKey: await exportSPKI(rsa.publicKey) }] },
  });
  const now = Math.floor(Date.now() / 1000);
  const valid = { aud: 'tollgate-tests', exp: now + 600 };
  const sign = (claims: JWTPayload, kid = 'rsa-1', privateKey = rsa.privateKey): Promise<string> => new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid }).sign(privateKey);
  const wsUrl = (network: string): string => gw.url(network, key.apiKey).replace('http:', 'ws:').replace('/v3/', '/ws/v3/');

  async function first(network: string, token: string | undefined): Promise<{ result?: string; error?: { code: number; message: string; data: { setting: string } } }> {
    const ws = await openWs(wsUrl(network), token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } });
    t.teardown(() => ws.close());
    ws.send(rpc('eth_chainId'));
    return (await ws.waitFor(1))[0] as { result?: string; error?: { code: number; message: string; data: { setting: string } } };
  }

  t.type((await first('eth', await sign(valid))).result, 'string', 'a valid token on a network that is on');
  const cases: Array<[string, string, string | undefined, string, string]> = [
    ['a network turned off', 'eth-b', await sign(valid), 'networks', 'network disabled for this key: eth-b'],
    ['no token', 'eth', undefined, 'jwt', 'JWT required'],
    ['expired', 'eth', await sign({ ...valid, exp: now - 60 }), 'jwt', 'JWT expired'],
    ['wrong aud', 'eth', await sign({ ...valid, aud: 'elsewhere' }), 'jwt.audience', 'JWT audience not accepted'],
    ['unknown kid', 'eth', await sign(valid, 'rsa-2'), 'jwt.keys', 'JWT "kid" is not one of the key\'s public keys: rsa-2'],
    ['another signer', 'eth', await sign(valid, 'rsa-1', stranger.privateKey), 'jwt.keys', 'JWT signature does not verify'],
    ['a narrowed claim', 'eth', await sign({ ...valid, methods: ['eth_blockNumber'] }), 'jwt.methods', 'method not allowed by the JWT: eth_chainId'],
  ];
  for (const [what, network, token, setting, reason] of cases) {
    const answer = await first(network, token);
    t.equal(answer.error?.code, -33100, `${what}: FORBIDDEN`);
    t.equal(answer.error?.data.setting, setting, `${what}: names ${setting}`);
    t.match(answer.error?.message, `${reason}; fix: `, `${what}: the reason and the fix`);
  }
});
