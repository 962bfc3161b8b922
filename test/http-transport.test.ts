import t from 'tap';
import { request } from 'undici';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { devnet } from '@tollgate/devnet';
import { startTestGateway } from './helpers/gateway.js';
import { post, rpc } from './helpers/json-rpc.js';

const KEY = 'http-test-key-0001';
const gw = await startTestGateway(
  {
    server: { maxBodyBytes: 4096, maxBatchSize: 5 },
    keys: [{ key: KEY, plan: 'growth' }],
    networks: [
      { name: 'eth', families: ['evm'], upstreams: [{ embedded: 'anvil' }] },
      { name: 'hosted', families: ['evm'], base: { hosts: ['eth.example.test'] }, upstreams: [{ embedded: 'anvil' }] },
    ],
  },
  [httpTransport(), evmFamily(), devnet()],
);
t.teardown(() => gw.close());
const url = gw.url('eth', KEY);

t.test('a call answers 200 with the node result and names the upstream', async (t) => {
  const res = await post(url, rpc('eth_chainId', []));
  t.equal(res.status, 200);
  t.same(res.json, { jsonrpc: '2.0', id: 1, result: '0x7a69' });
  t.equal(res.headers['content-type'], 'application/json');
  t.match(res.headers['x-tollgate-upstream'], /^eth-primary-1$/);
  t.equal(res.headers['access-control-allow-origin'], undefined, 'a request without an Origin (no browser) gets no CORS headers');
  t.equal(res.headers['access-control-expose-headers'], undefined);
});

t.test('a browser call (it sends an Origin) gets the CORS headers, on answers and on refusals', async (t) => {
  const browser = { 'content-type': 'application/json', origin: 'https://app.example' };
  const res = await post(url, rpc('eth_chainId', []), browser);
  t.equal(res.status, 200);
  t.equal(res.headers['access-control-allow-origin'], '*');
  t.match(String(res.headers['access-control-expose-headers']), /\bx-tollgate-upstream\b/);
  t.match(String(res.headers['access-control-expose-headers']), /\bpayment-required\b/);
  const refused = await post(url, 'x', { 'content-type': 'text/plain', origin: 'https://app.example' });
  t.equal(refused.status, 415);
  t.equal(refused.headers['access-control-allow-origin'], '*', 'a page reads the refusal too');
  const unknownKey = await post(gw.url('eth', 'no-such-key-5678'), rpc('eth_chainId', []), browser);
  t.equal(unknownKey.headers['access-control-allow-origin'], '*');
});

t.test('a network is addressed by host name as well as by path prefix', async (t) => {
  const res = await post(`${gw.origin}/v3/${KEY}`, rpc('eth_chainId', []), { 'content-type': 'application/json', host: 'eth.example.test:8545' });
  t.equal(res.status, 200);
  t.same(res.json, { jsonrpc: '2.0', id: 1, result: '0x7a69' });
});

t.test('string ids and id 0 are echoed', async (t) => {
  t.same((await post(url, rpc('eth_chainId', [], 'abc'))).json, { jsonrpc: '2.0', id: 'abc', result: '0x7a69' });
  t.same((await post(url, rpc('eth_chainId', [], 0))).json, { jsonrpc: '2.0', id: 0, result: '0x7a69' });
});

t.test('params may be omitted for a method without params', async (t) => {
  t.same((await post(url, rpc('eth_chainId'))).json, { jsonrpc: '2.0', id: 1, result: '0x7a69' });
});

t.test('missing and unknown keys get 401 with a JSON-RPC error', async (t) => {
  for (const path of ['/eth/v3/no-such-key-1234', '/eth/v3/', '/eth/v3']) {
    const res = await post(gw.origin + path, rpc('eth_chainId', []));
    t.equal(res.status, 401, path);
    t.equal((res.json as { error: { code: number } }).error.code, -33001, path);
  }
});

t.test('malformed JSON gets 400 and -32700', async (t) => {
  const res = await post(url, '{"jsonrpc":"2.0","id":1,');
  t.equal(res.status, 400);
  t.same(res.json, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
});

t.test('a bad envelope gets 400 and -32600', async (t) => {
  for (const body of [{ jsonrpc: '1.0', id: 1, method: 'eth_chainId' }, { jsonrpc: '2.0', id: 1 }, { jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: 'x' }, 42, []]) {
    const res = await post(url, body);
    t.equal(res.status, 400, JSON.stringify(body));
    t.equal((res.json as { error: { code: number } }).error.code, -32600, JSON.stringify(body));
  }
});

t.test('an unknown method gets -32601 and bad params -32602 naming the parameter', async (t) => {
  const unknown = await post(url, rpc('eth_doesNotExist', []));
  t.equal(unknown.status, 200);
  t.equal((unknown.json as { error: { code: number } }).error.code, -32601);
  const bad = await post(url, rpc('eth_getTransactionByHash', ['0x1234']));
  t.equal(bad.status, 200);
  const error = (bad.json as { error: { code: number; message: string } }).error;
  t.equal(error.code, -32602);
  t.match(error.message, /argument 0/);
});

t.test('wrong HTTP method, content type and oversized bodies are refused with their statuses', async (t) => {
  const get = await request(url, { method: 'GET' });
  t.equal(get.statusCode, 405);
  t.equal(get.headers.allow, 'POST');
  await get.body.text();
  const text = await post(url, JSON.stringify(rpc('eth_chainId', [])), { 'content-type': 'text/plain' });
  t.equal(text.status, 415);
  const none = await post(url, JSON.stringify(rpc('eth_chainId', [])), {});
  t.equal(none.status, 415);
  const charset = await post(url, rpc('eth_chainId', []), { 'content-type': 'application/json; charset=utf-8' });
  t.equal(charset.status, 200);
  const big = await post(url, JSON.stringify({ ...rpc('eth_chainId', []), pad: 'x'.repeat(5000) }));
  t.equal(big.status, 413);
  t.equal((big.json as { error: { code: number } }).error.code, -32600);
});

t.test('paths outside /v3/<key> and unknown networks get 404', async (t) => {
  t.equal((await post(`${gw.origin}/nowhere/v3/${KEY}`, rpc('eth_chainId', []))).status, 404);
  t.equal((await post(`${gw.origin}/eth/v2/${KEY}`, rpc('eth_chainId', []))).status, 404);
});

t.test('CORS preflight is answered', async (t) => {
  const res = await request(url, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } });
  t.equal(res.statusCode, 204);
  t.equal(res.headers['access-control-allow-origin'], '*');
  t.match(String(res.headers['access-control-allow-methods']), /POST/);
  t.match(String(res.headers['access-control-allow-headers']), /\bauthorization\b/, 'a page may send a key secret or a JWT');
  await res.body.text();
});

t.test('a batch answers per item, in request order, with errors in place', async (t) => {
  const res = await post(url, [rpc('eth_chainId', [], 1), rpc('nope', [], 2), 7, rpc('eth_blockNumber', [], 'x'), { jsonrpc: '2.0', method: 'eth_chainId', params: [] }]);
  t.equal(res.status, 200);
  const items = res.json as Array<{ id: unknown; result?: unknown; error?: { code: number } }>;
  t.equal(items.length, 4, 'the notification gets no answer');
  t.same(items.map((i) => i.id), [1, 2, null, 'x']);
  t.equal(items[0]!.result, '0x7a69');
  t.equal(items[1]!.error!.code, -32601);
  t.equal(items[2]!.error!.code, -32600);
  t.match(items[3]!.result, /^0x[0-9a-f]+$/);
});

t.test('a batch larger than the limit is refused whole', async (t) => {
  const res = await post(url, Array.from({ length: 6 }, (_, i) => rpc('eth_chainId', [], i)));
  t.equal(res.status, 400);
  t.equal((res.json as { error: { code: number } }).error.code, -32600);
});

t.test('a batch whose calls all fail authentication gets 401', async (t) => {
  const res = await post(`${gw.origin}/eth/v3/no-such-key-1234`, [rpc('eth_chainId', [], 1), rpc('eth_chainId', [], 2)]);
  t.equal(res.status, 401);
  t.same((res.json as Array<{ id: number }>).map((i) => i.id), [1, 2]);
});

t.test('a notification is served and answered with 204 and no body', async (t) => {
  const res = await post(url, { jsonrpc: '2.0', method: 'eth_chainId', params: [] });
  t.equal(res.status, 204);
  t.equal(res.text, '');
});
