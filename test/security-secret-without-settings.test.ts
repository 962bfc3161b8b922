import t from 'tap';
import { request } from 'undici';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { security } from '../plugins/security/index.js';
import { startTestGateway } from './helpers/gateway.js';
import { startTinyUpstream } from './helpers/tiny-upstream.js';

// A wrong key secret is never ignored, also on a key that has no security settings at all.
const KEY = 'plain-key-with-secret-01';
const SECRET = 'the-secret-of-the-plain-key';
const upstream = await startTinyUpstream();
t.teardown(() => upstream.close());
const gw = await startTestGateway(
  { keys: [{ key: KEY, secret: SECRET, plan: 'growth' }], networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url }] }] },
  [httpTransport(), evmFamily(), security()],
);
t.teardown(() => gw.close());

async function chainId(secret?: string): Promise<{ status: number; body: string }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (secret !== undefined) headers.authorization = `Basic ${Buffer.from(`:${secret}`).toString('base64')}`;
  const res = await request(gw.url('eth', KEY), { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }) });
  return { status: res.statusCode, body: await res.body.text() };
}

t.test('no secret: served (none is required)', async (t) => {
  t.equal((await chainId()).status, 200);
});

t.test('the right secret: served', async (t) => {
  t.equal((await chainId(SECRET)).status, 200);
});

t.test('a wrong secret: refused, naming the setting', async (t) => {
  const answer = await chainId('wrong');
  t.not(answer.status, 200);
  t.match(answer.body, /key secret does not match/);
});
