import t from 'tap';
import { request } from 'undici';
import { IPFS_KEY, IPFS_SECRET, NO_SECRET_KEY, NO_STORAGE_KEY, NO_STORAGE_SECRET, basic, startIpfsGateway } from './helpers/ipfs-gateway.js';

// The file-storage API over raw HTTP: every status code the spec lists, kubo's error bodies and headers,
// and object/get in both data encodings.

// Refusals of every kind follow one another from one address here: the refusal budget (tested in
// test/ipfs-auth-flood.test.ts) is set out of their way.
const gw = await startIpfsGateway({ ipfs: { secretChecksPerSourcePerSecond: 1000, secretChecksPerSecond: 1000 } });
t.teardown(() => gw.close());

const HELLO_WORLD = 'QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o';
const HELLO_MARS = 'QmWkHFpYBZ9mpPRreRbMhhYWXfUhBAue3JkbbpFqwowSRb';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: () => unknown;
}

async function call(path: string, init: { method?: string; authorization?: string | null; body?: string | Buffer; headers?: Record<string, string> } = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...init.headers };
  const authorization = init.authorization === undefined ? gw.auth : init.authorization;
  if (authorization !== null) headers.authorization = authorization;
  const res = await request(`${gw.api}/${path}`, { method: (init.method ?? 'POST') as 'POST', headers, ...(init.body === undefined ? {} : { body: init.body }) });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text, json: () => JSON.parse(text) };
}

function multipart(files: Array<{ name?: string; content: string }>): { body: Buffer; type: string } {
  const boundary = '----tollgate-test-boundary';
  const parts = files.map((f, i) => `--${boundary}\r\nContent-Disposition: form-data; name="file${i === 0 ? '' : `-${i}`}"; filename="${encodeURIComponent(f.name ?? '')}"\r\nContent-Type: application/octet-stream\r\n\r\n${f.content}\r\n`);
  return { body: Buffer.from(`${parts.join('')}--${boundary}--\r\n`), type: `multipart/form-data; boundary=${boundary}` };
}

t.before(async () => {
  const upload = multipart([{ content: 'hello world\n' }, { content: 'Hello Mars' }]);
  const res = await call('add', { body: upload.body, headers: { 'content-type': upload.type } });
  if (res.status !== 200) throw new Error(`seeding failed: ${res.status} ${res.text}`);
});

t.test('200: add answers NDJSON with kubo\'s streaming headers', async (t) => {
  const upload = multipart([{ name: 'a.txt', content: 'hello world\n' }, { name: 'b.txt', content: '' }]);
  const res = await call('add?stream-channels=true&progress=false&pin=true', { body: upload.body, headers: { 'content-type': upload.type } });
  t.equal(res.status, 200);
  t.equal(res.headers['content-type'], 'application/json');
  t.equal(res.headers['x-chunked-output'], '1');
  t.equal(res.headers.trailer, 'X-Stream-Error');
  const lines = res.text.split('\n');
  t.equal(lines.pop(), '', 'every object ends with a newline');
  t.same(lines.map((l) => JSON.parse(l)), [
    { Name: 'a.txt', Hash: HELLO_WORLD, Size: '20' },
    { Name: 'b.txt', Hash: 'QmbFMke1KXqnYyBBWxB74N4c5SBnJMVAiMNRcGu6x1AwQH', Size: '6' },
  ]);
});

t.test('200: cat streams raw bytes with X-Stream-Output and X-Content-Length', async (t) => {
  const res = await call(`cat?arg=${HELLO_WORLD}`);
  t.equal(res.status, 200);
  t.equal(res.text, 'hello world\n');
  t.equal(res.headers['x-stream-output'], '1');
  t.equal(res.headers['x-content-length'], '12');
  t.equal(res.headers['content-type'], 'text/plain');
  t.equal(res.headers['transfer-encoding'], 'chunked');
  t.equal(res.headers.trailer, 'X-Stream-Error');
  t.equal(res.headers['x-tollgate-upstream'], 'helia');
  const concatenated = await call(`cat?arg=${HELLO_WORLD}&arg=${HELLO_MARS}&offset=6&length=12`);
  t.equal(concatenated.text, 'world\nHello ', 'several args are concatenated, the range spans them');
});

t.test('200: object/get in both data encodings, as kubo answered it', async (t) => {
  const text = await call(`object/get?arg=${HELLO_MARS}`);
  t.equal(text.status, 200);
  t.equal(text.headers['content-type'], 'application/json');
  t.equal(text.text, '{"Links":[],"Data":"\\b\\u0002\\u0012\\nHello Mars\\u0018\\n"}\n', 'the notes\' verbatim text encoding');
  const base64 = await call(`object/get?arg=${HELLO_MARS}&data-encoding=base64&encoding=json`);
  t.equal(base64.status, 200);
  t.equal(base64.text, '{"Links":[],"Data":"CAISCkhlbGxvIE1hcnMYCg=="}\n', 'the notes\' verbatim base64 encoding');
});

t.test('400: malformed calls and bad arguments, with kubo\'s client error body', async (t) => {
  const cases: Array<[string, RegExp]> = [
    ['cat', /argument "ipfs-path" is required/],
    ['cat?arg=not-a-cid', /invalid path "not-a-cid"/],
    ['cat?arg=QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5', /invalid path/],
    ['cat?arg=/ipns/example.com', /\/ipns\/ names are not served/],
    [`cat?arg=${HELLO_WORLD}&offset=abc`, /offset must be an integer/],
    [`object/get?arg=${HELLO_WORLD}&data-encoding=hex`, /data-encoding/],
    [`object/get?arg=${HELLO_WORLD}&arg=${HELLO_MARS}`, /takes one argument/],
    ['object/get', /argument "key" is required/],
    ['version?arg=x', /takes no argument/],
    ['add', /multipart\/form-data/],
  ];
  for (const [path, message] of cases) {
    const res = await call(path);
    t.equal(res.status, 400, path);
    t.equal(res.headers['content-type'], 'application/json', path);
    const body = res.json() as { Message: string; Code: number; Type: string };
    t.match(body, { Code: 1, Type: 'error' }, path);
    t.match(body.Message, message, path);
  }
});

t.test('401 with WWW-Authenticate: missing, malformed or wrong credentials, unknown key, key without a secret', async (t) => {
  const cases: Array<[string, string | null]> = [
    ['no Authorization header', null],
    ['not basic', 'Bearer abc'],
    ['not base64 user:password', 'Basic !!!'],
    ['no password separator', `Basic ${Buffer.from('just-a-key').toString('base64')}`],
    ['wrong secret', basic(IPFS_KEY, 'wrong-secret-0001')],
    ['empty secret', basic(IPFS_KEY, '')],
    ['unknown key', basic('no-such-key-0001', IPFS_SECRET)],
    ['key without a secret', basic(NO_SECRET_KEY, 'anything-at-all')],
  ];
  for (const [what, authorization] of cases) {
    const res = await call(`cat?arg=${HELLO_WORLD}`, { authorization });
    t.equal(res.status, 401, what);
    t.equal(res.headers['www-authenticate'], 'Basic realm="tollgate", charset="UTF-8"', what);
    t.match(res.json(), { Code: 4, Type: 'error' }, what);
  }
  const wrong = await call(`cat?arg=${HELLO_WORLD}`, { authorization: basic(IPFS_KEY, 'wrong-secret-0001') });
  const unknown = await call(`cat?arg=${HELLO_WORLD}`, { authorization: basic('no-such-key-0001', IPFS_SECRET) });
  t.equal(wrong.text, unknown.text, 'a wrong secret and an unknown key look the same');
});

t.test('403: a plan without the file-storage API', async (t) => {
  const res = await call(`cat?arg=${HELLO_WORLD}`, { authorization: basic(NO_STORAGE_KEY, NO_STORAGE_SECRET) });
  t.equal(res.status, 403);
  t.same(res.json(), { Message: 'the core plan does not include the file-storage API', Code: 4, Type: 'error' });
});

t.test('404: an unknown command, as kubo answers it', async (t) => {
  for (const path of ['dag/export?arg=x', 'object/put', 'pin/verify', 'nope']) {
    const res = await call(path);
    t.equal(res.status, 404, path);
    t.equal(res.text, '404 page not found\n', path);
  }
  const get = await call('nope', { method: 'GET' });
  t.equal(get.status, 404, 'unknown stays 404 whatever the method');
});

t.test('405: any HTTP method but POST', async (t) => {
  for (const method of ['GET', 'PUT', 'DELETE', 'PATCH']) {
    const res = await call(`cat?arg=${HELLO_WORLD}`, { method });
    t.equal(res.status, 405, method);
    t.equal(res.headers.allow, 'OPTIONS, POST', method);
    t.equal(res.text, '405 - Method Not Allowed\n', method);
  }
  const head = await request(`${gw.api}/cat?arg=${HELLO_WORLD}`, { method: 'HEAD', headers: { authorization: gw.auth } });
  await head.body.dump();
  t.equal(head.statusCode, 405, 'HEAD');
  const preflight = await request(`${gw.api}/cat`, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } });
  await preflight.body.dump();
  t.equal(preflight.statusCode, 200, 'a CORS preflight is answered');
  t.match(preflight.headers['access-control-allow-headers'], /authorization/);
});

t.test('500 with kubo\'s error body: the node could not serve the call', async (t) => {
  const missing = 'QmZ4tDuvesekSs4qM5ZBKpXiZGun7S2CYtEZRB3DYXkjGx';
  const cases: Array<[string, string]> = [
    [`cat?arg=${HELLO_WORLD}&offset=-1`, 'cannot specify negative offset'],
    [`cat?arg=${HELLO_WORLD}&length=-5`, 'cannot specify negative length'],
    [`cat?arg=${missing}`, `block was not found locally (offline): ipld: could not find ${missing}`],
  ];
  for (const [path, message] of cases) {
    const res = await call(path);
    t.equal(res.status, 500, path);
    t.equal(res.headers['content-type'], 'application/json', path);
    t.same(res.json(), { Message: message, Code: 0, Type: 'error' }, path);
  }
  const upload = multipart([{ name: 'd/x.txt', content: 'x' }]);
  const added = (await call('add', { body: upload.body, headers: { 'content-type': upload.type } })).text.trim().split('\n').map((l) => JSON.parse(l) as { Name: string; Hash: string });
  const dir = added.find((e) => e.Name === 'd')!.Hash;
  const res = await call(`cat?arg=${dir}`);
  t.equal(res.status, 500);
  t.same(res.json(), { Message: 'this dag node is a directory', Code: 0, Type: 'error' });
});

t.test('429: per-key read and write request rates from the plan, with Retry-After', async (t) => {
  const teamGw = await startIpfsGateway({
    ipfs: { plans: { team: { readsPerSecond: 0.5, writesPerSecond: 0.5, readBurst: 2, writeBurst: 1 } } },
    config: { keys: [{ key: 'ipfs-team-key-0001', secret: 'ipfs-team-secret', plan: 'team' }] },
  });
  t.teardown(() => teamGw.close());
  const auth = basic('ipfs-team-key-0001', 'ipfs-team-secret');
  const post = async (path: string, headers: Record<string, string> = {}, body?: Buffer): Promise<Answer> => {
    const res = await request(`${teamGw.api}/${path}`, { method: 'POST', headers: { authorization: auth, ...headers }, ...(body === undefined ? {} : { body }) });
    const text = await res.body.text();
    return { status: res.statusCode, headers: res.headers, text, json: () => JSON.parse(text) };
  };
  t.equal((await post('version')).status, 200);
  t.equal((await post('version')).status, 200);
  const limited = await post('version');
  t.equal(limited.status, 429, 'the third read within the burst of 2 is refused');
  t.match(limited.json(), { Code: 3, Type: 'error', Message: /request-rate limit of 0.5 reads per second/ });
  t.ok(Number(limited.headers['retry-after']) >= 1, 'Retry-After in seconds');
  const upload = multipart([{ content: 'write' }]);
  t.equal((await post('add', { 'content-type': upload.type }, upload.body)).status, 200, 'writes have their own bucket');
  t.equal((await post('add', { 'content-type': upload.type }, upload.body)).status, 429, 'the second write is refused');
  t.equal((await post(`cat?arg=${HELLO_WORLD}&offset=abc`)).status, 400, 'a malformed call is refused before the rate limit');
});
