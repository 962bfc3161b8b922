import t from 'tap';
import type { ServerResponse } from 'node:http';
import createClient, { type Client } from 'openapi-fetch';
import { startIpfsGateway } from './helpers/ipfs-gateway.js';
import type { components, paths } from './helpers/ipfs-pinning-service-api.js';
import { startKuboStub } from './helpers/kubo-stub.js';
import { until } from './helpers/until.js';

// The statuses the node drives, seen while it works: a kubo stand-in holds `pin/add` (as kubo does
// while it fetches content from the network) until the test lets it answer, or never answers (content
// nobody provides), so `pinning` and the pin timeout are observed, not assumed.

type PinStatus = components['schemas']['PinStatus'];

const HELD = 'QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o';
const DROPPED = 'QmWkHFpYBZ9mpPRreRbMhhYWXfUhBAue3JkbbpFqwowSRb';
const NOWHERE = 'QmdFyxZXsFiP4csgfM5uPu99AvFiKH62CSPDw5TP92nr7w';
const SILENT = 'bafkreifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4';

const held = new Map<string, ServerResponse>();
const stub = await startKuboStub((req, res) => {
  req.resume();
  const url = new URL(req.url ?? '/', 'http://stub');
  const cid = url.searchParams.get('arg') ?? '';
  const json = (value: unknown): void => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(`${JSON.stringify(value)}\n`);
  };
  switch (url.pathname) {
    case '/api/v0/pin/add':
      // As kubo with its timeout option: the command's error once it runs out.
      if (cid === NOWHERE) {
        const ms = Number(/^(\d+)ms$/.exec(url.searchParams.get('timeout') ?? '')?.[1]);
        return void setTimeout(() => {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end(`${JSON.stringify({ Message: 'context deadline exceeded', Code: 0, Type: 'error' })}\n`);
        }, ms);
      }
      // Held until released; SILENT's never answers.
      return void held.set(cid, res);
    case '/api/v0/dag/stat': return json({ UniqueBlocks: 1, TotalSize: 42, DagStats: [] });
    case '/api/v0/pin/rm': return json({ Pins: [cid] });
    default:
      res.writeHead(404);
      res.end();
  }
});
t.teardown(() => stub.close());

const gw = await startIpfsGateway({ upstreams: [{ name: 'kubo', url: stub.url }], ipfs: { pinningService: { pinTimeoutMs: 300 } } });
t.teardown(() => gw.close());

const client: Client<paths> = createClient<paths>({ baseUrl: `${gw.origin}/ipfs`, headers: { authorization: 'Bearer ipfs-test-key-0001:ipfs-test-secret-0001' } });

async function statusOf(requestid: string): Promise<PinStatus> {
  const { data, response } = await client.GET('/pins/{requestid}', { params: { path: { requestid } } });
  if (data === undefined) throw new Error(`HTTP ${response.status}`);
  return data;
}

function release(cid: string): void {
  const res = held.get(cid)!;
  held.delete(cid);
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(`${JSON.stringify({ Pins: [cid] })}\n`);
}

t.test('queued, then pinning while the node works, then pinned once it has the content', async (t) => {
  const { data, response } = await client.POST('/pins', { body: { cid: HELD } });
  t.equal(response.status, 202);
  t.equal(data!.status, 'queued', 'answered before the node is asked');
  await until('the node is asked to pin', () => held.has(HELD));
  t.equal((await statusOf(data!.requestid)).status, 'pinning', 'pinning while the node works');
  const inProgress = await client.GET('/pins', { params: { query: { status: ['queued', 'pinning'] } }, querySerializer: { array: { style: 'form', explode: false } } });
  t.same(inProgress.data?.results.map((r) => r.requestid), [data!.requestid], 'listed as in progress');
  t.equal((await client.GET('/pins', {})).data?.count, 0, 'not yet among the pinned');
  release(HELD);
  await until('the pin is settled', async () => (await statusOf(data!.requestid)).status === 'pinned');
  t.same((await statusOf(data!.requestid)).info, { dag_size: '42' }, 'weighed by the node\'s dag/stat');
});

t.test('a pin the node cannot make within pinTimeoutMs fails, with the reason', async (t) => {
  const { data } = await client.POST('/pins', { body: { cid: NOWHERE } });
  await until('the pin fails', async () => (await statusOf(data!.requestid)).status === 'failed');
  t.match((await statusOf(data!.requestid)).info, { status_details: `the node could not pin ${NOWHERE} within 300 ms` });
  t.ok(stub.requests.some((r) => r.startsWith('/api/v0/pin/add') && r.includes(NOWHERE) && r.includes('timeout=300ms')), 'the node is told how long it may try');

  // A node that does not answer at all: the request's own deadline, a little later.
  const silent = await client.POST('/pins', { body: { cid: SILENT } });
  await until('the node is asked to pin', () => held.has(SILENT));
  await until('the pin fails', async () => (await statusOf(silent.data!.requestid)).status === 'failed');
  t.match((await statusOf(silent.data!.requestid)).info, { status_details: `the node did not finish pinning ${SILENT} in time` });
});

t.test('a pin deleted while the node works on it: gone at once, unpinned once the node is done', async (t) => {
  const { data } = await client.POST('/pins', { body: { cid: DROPPED } });
  await until('the node is asked to pin', () => held.has(DROPPED));
  const deleted = await client.DELETE('/pins/{requestid}', { params: { path: { requestid: data!.requestid } } });
  t.equal(deleted.response.status, 202);
  t.equal((await client.GET('/pins/{requestid}', { params: { path: { requestid: data!.requestid } } })).response.status, 404, 'gone at once');
  t.notOk(stub.requests.some((r) => r.startsWith('/api/v0/pin/rm') && r.includes(DROPPED)), 'the node is not told to unpin what it is still pinning');
  release(DROPPED);
  await until('the node is told to unpin it', () => stub.requests.some((r) => r.startsWith('/api/v0/pin/rm') && r.includes(DROPPED)));
});

t.test('a plan without file storage: 403 FORBIDDEN; a browser\'s preflight is answered', async (t) => {
  const core = createClient<paths>({ baseUrl: `${gw.origin}/ipfs`, headers: { authorization: 'Bearer ipfs-test-key-core:ipfs-test-secret-core' } });
  const refused = await core.GET('/pins', {});
  t.equal(refused.response.status, 403);
  t.match(refused.error, { error: { reason: 'FORBIDDEN', details: /does not include the file-storage API/ } });
  const preflight = await fetch(`${gw.origin}/ipfs/pins/some-id`, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'DELETE' } });
  t.equal(preflight.status, 204);
  t.equal(preflight.headers.get('access-control-allow-methods'), 'GET, POST, DELETE, OPTIONS');
  t.match(preflight.headers.get('access-control-allow-headers'), /authorization/);
});
