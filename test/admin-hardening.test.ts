import t from 'tap';
import { request } from 'undici';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { ledgerSqlite } from '../plugins/ledger-sqlite/index.js';
import { admin } from '../plugins/admin/index.js';
import { startTestGateway } from './helpers/gateway.js';
import { startTinyUpstream } from './helpers/tiny-upstream.js';

// Bad input to the admin API and the dashboard's sign-in gets clear answers, never a 500 or a stack.
const TOKEN = 'admin-token-for-tests-0123456789';
const upstream = await startTinyUpstream();
t.teardown(() => upstream.close());
const gw = await startTestGateway(
  { networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url }] }], plugins: { admin: { token: TOKEN } } },
  [ledgerSqlite({ path: ':memory:' }), admin(), httpTransport(), evmFamily()],
);
t.teardown(() => gw.close());
const base = `${gw.origin}/admin/v1`;

async function call(method: string, path: string, body?: string, token: string | null = TOKEN): Promise<{ status: number; headers: Record<string, unknown>; body: { error?: { code: string; message: string } } }> {
  const res = await request(`${base}${path}`, { method: method as 'GET', headers: { 'content-type': 'application/json', ...(token === null ? {} : { authorization: `Bearer ${token}` }) }, body });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, body: text === '' ? {} : JSON.parse(text) };
}

t.test('a malformed percent-escape in the path is a 400, not a 500', async (t) => {
  const answer = await call('GET', '/keys/%E0%A4%A');
  t.equal(answer.status, 400);
  t.same(answer.body, { error: { code: 'bad_request', message: 'the path holds a malformed percent-escape' } });
});

t.test('a body nested too deeply is a 400, not a store failure', async (t) => {
  const created = await call('POST', '/keys', JSON.stringify({ plan: 'core' }));
  t.equal(created.status, 201);
  const id = (created.body as unknown as { id: string }).id;
  const deep = `{"settings":${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}}`;
  const answer = await call('PATCH', `/keys/${id}`, deep);
  t.equal(answer.status, 400);
  t.equal(answer.body.error?.code, 'bad_request');
});

t.test('admin answers carry X-Content-Type-Options: nosniff', async (t) => {
  for (const answer of [await call('GET', '/plans'), await call('GET', '/plans', undefined, null), await call('GET', '/keys/%E0')]) {
    t.equal(answer.headers['x-content-type-options'], 'nosniff', `on a ${answer.status}`);
  }
});

t.test('dashboard sign-in: wrong tokens are throttled per source address', async (t) => {
  const signIn = async (token: string): Promise<number> => {
    const res = await request(`${gw.origin}/admin/session`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${encodeURIComponent(token)}` });
    await res.body.text();
    return res.statusCode;
  };
  const statuses: number[] = [];
  for (let i = 0; i < 20; i++) statuses.push(await signIn(`wrong-token-${i}`));
  t.same(statuses.slice(0, 5), [303, 303, 303, 303, 303], 'five wrong tokens are answered');
  t.same(statuses.slice(5), Array.from({ length: 15 }, () => 429), 'then every attempt gets 429 at once');
  t.equal(await signIn(TOKEN), 429, 'even the right token waits its turn');
});
