/**
 * The file-storage API forwards exactly what it validated: the node's query is rebuilt from the call's
 * checked params, so a repeated option reaches the node once, with the value the gateway checked, and
 * nothing of the client's raw query string goes through unchecked.
 */
import t from 'tap';
import { request } from 'undici';
import { startIpfsGateway } from './helpers/ipfs-gateway.js';
import { CAT_HEADERS, startKuboStub } from './helpers/kubo-stub.js';

const HELLO = 'QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o';

const stub = await startKuboStub((req, res) => {
  req.resume();
  res.writeHead(200, CAT_HEADERS);
  res.end('hello world\n');
});
const gw = await startIpfsGateway({ upstreams: [{ url: stub.url }] });
t.teardown(async () => {
  await gw.close();
  await stub.close();
});

async function cat(query: string): Promise<{ status: number; forwarded: string | undefined }> {
  const before = stub.requests.length;
  const res = await request(`${gw.api}/cat?${query}`, { method: 'POST', headers: { authorization: gw.auth } });
  await res.body.text();
  return { status: res.statusCode, forwarded: stub.requests[before] };
}

t.test('a repeated option reaches the node once, with the value that was checked', async (t) => {
  const { status, forwarded } = await cat(`arg=${HELLO}&offset=1&offset=-99999999999999999999999&length=5`);
  t.equal(status, 200);
  t.equal(forwarded, `/api/v0/cat?arg=${HELLO}&offset=1&length=5`);
});

t.test('arguments keep their order; an unlisted option is forwarded as validated (a string), re-encoded', async (t) => {
  const { status, forwarded } = await cat(`progress&arg=${HELLO}&arg=/ipfs/${HELLO}&note=a%20b`);
  t.equal(status, 200);
  t.equal(forwarded, `/api/v0/cat?arg=${HELLO}&arg=%2Fipfs%2F${HELLO}&progress=&note=a+b`);
});

t.test('an invalid first value is refused, and nothing reaches the node', async (t) => {
  const before = stub.requests.length;
  const res = await request(`${gw.api}/cat?arg=${HELLO}&offset=x&offset=1`, { method: 'POST', headers: { authorization: gw.auth } });
  await res.body.text();
  t.equal(res.statusCode, 400);
  t.equal(stub.requests.length, before);
});
