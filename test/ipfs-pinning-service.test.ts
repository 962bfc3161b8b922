import t from 'tap';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import createClient, { type Client } from 'openapi-fetch';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';
import { create, type KuboRPCClient } from 'kubo-rpc-client';
import { CID } from 'multiformats/cid';
import { request } from 'undici';
import { Tokens } from '../core/plugin-api.js';
import type { UsageEvent, UsageRecorder } from '../core/store-api.js';
import type { TollgatePlugin } from '../core/index.js';
import { admin } from '../plugins/admin/index.js';
import { startIpfsGateway } from './helpers/ipfs-gateway.js';
import type { components, paths } from './helpers/ipfs-pinning-service-api.js';
import { until } from './helpers/until.js';

// The IPFS Pinning Service API (v1.0.0) at {origin}/ipfs/pins, through a client generated from the spec's
// OpenAPI document (openapi-typescript types, openapi-fetch), against a gateway in front of the embedded
// node: create, list with every filter and paging, get, replace, delete; two keys that do not see each
// other's pins; the plan's storageBytes; empty or wrong tokens refused in the spec's Failure shape.

type PinStatus = components['schemas']['PinStatus'];
type PinResults = components['schemas']['PinResults'];
type Failure = components['schemas']['Failure'];

const SPEC = fileURLToPath(new URL('../../shared/conformance/ipfs-pinning-service/ipfs-pinning-service.yaml', import.meta.url));
const ADMIN_TOKEN = 'admin-token-for-psa-tests-0123456789';
const KEYS = {
  a: { key: 'psa-test-key-a-0001', secret: 'psa-test-secret-a', id: 'psa-a', plan: 'growth' },
  b: { key: 'psa-test-key-b-0001', secret: 'psa-test-secret-b', id: 'psa-b', plan: 'growth' },
  c: { key: 'psa-test-key-c-0001', secret: 'psa-test-secret-c', id: 'psa-c', plan: 'starter' },
  d: { key: 'psa-test-key-d-0001', secret: 'psa-test-secret-d', id: 'psa-d', plan: 'tiny' },
};

const records: UsageEvent[] = [];
const recording: TollgatePlugin = {
  name: 'recording-usage',
  register(container) {
    const usage = container.resolve<UsageRecorder>(Tokens.UsageRecorder);
    container.register(Tokens.UsageRecorder, { useValue: { record: (event) => { records.push(event); return usage.record(event); } } satisfies UsageRecorder });
  },
};

const gw = await startIpfsGateway({
  config: {
    keys: Object.values(KEYS),
    plans: {
      starter: { dailyCredits: 1_000_000, creditsPerSecond: 1_000, failover: false },
      tiny: { dailyCredits: 1_000_000, creditsPerSecond: 1_000, failover: false },
    },
    plugins: {
      ipfs: {
        secretChecksPerSourcePerSecond: 50,
        secretChecksPerSecond: 50,
        plans: { core: false, growth: { readsPerSecond: 200, writesPerSecond: 100 }, starter: { readsPerSecond: 50, writesPerSecond: 50, storageBytes: 100 }, tiny: { readsPerSecond: 50, writesPerSecond: 50, storageBytes: 20 } },
        pinningService: { delegates: ['/ip4/203.0.113.1/tcp/4001/p2p/12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN'] },
      },
      admin: { token: ADMIN_TOKEN },
    },
  },
  plugins: [recording, admin()],
});
t.teardown(() => gw.close());

const endpoint = `${gw.origin}/ipfs`;

/** Query parameters as the spec declares them: arrays `style: form, explode: false` (`cid=a,b`), `meta` as JSON. */
function specQuery(query: Record<string, unknown>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) search.set(name, value.join(','));
    else if (typeof value === 'object' && value !== null) search.set(name, JSON.stringify(value));
    else search.set(name, String(value));
  }
  return search.toString();
}

function clientOf(token: string): Client<paths> {
  return createClient<paths>({ baseUrl: endpoint, headers: { authorization: `Bearer ${token}` }, querySerializer: specQuery });
}
const a = clientOf(`${KEYS.a.key}:${KEYS.a.secret}`);
const b = clientOf(`${KEYS.b.key}:${KEYS.b.secret}`);
const c = clientOf(`${KEYS.c.key}:${KEYS.c.secret}`);
const d = clientOf(`${KEYS.d.key}:${KEYS.d.secret}`);
const node = create({ url: `${gw.devnet.helia.instance()!.url}/api/v0` });
const kuboA = create({ url: `${gw.origin}/ipfs/api/v0`, headers: { authorization: `Basic ${Buffer.from(`${KEYS.a.key}:${KEYS.a.secret}`).toString('base64')}` } });

/** Puts `text` on the node, unpinned, as content a client would ask the service to pin; its CID. */
async function content(text: string): Promise<string> {
  return (await node.add(new TextEncoder().encode(text), { pin: false })).cid.toString();
}

async function nodePins(): Promise<string[]> {
  const cids: string[] = [];
  for await (const pin of node.pin.ls()) cids.push(pin.cid.toString());
  return cids;
}

async function statusOf(client: Client<paths>, requestid: string): Promise<PinStatus> {
  const { data, error, response } = await client.GET('/pins/{requestid}', { params: { path: { requestid } } });
  if (data === undefined) throw new Error(`GET /pins/${requestid}: HTTP ${response.status} ${JSON.stringify(error)}`);
  return data;
}

/** Waits until the node is done with the pin request (pinned or failed) and returns its status. */
async function settled(client: Client<paths>, requestid: string): Promise<PinStatus> {
  let last: PinStatus | undefined;
  await until(`pin request ${requestid} is settled`, async () => {
    last = await statusOf(client, requestid);
    return last.status === 'pinned' || last.status === 'failed';
  });
  return last!;
}

async function pinned(client: Client<paths>, pin: components['schemas']['Pin']): Promise<PinStatus> {
  const { data, response } = await client.POST('/pins', { body: pin });
  if (data === undefined) throw new Error(`POST /pins: HTTP ${response.status}`);
  const done = await settled(client, data.requestid);
  if (done.status !== 'pinned') throw new Error(`${pin.cid}: ${done.status} ${JSON.stringify(done.info)}`);
  return done;
}

async function list(client: Client<paths>, query: NonNullable<paths['/pins']['get']['parameters']['query']>): Promise<PinResults> {
  const { data, error, response } = await client.GET('/pins', { params: { query } });
  if (data === undefined) throw new Error(`GET /pins: HTTP ${response.status} ${JSON.stringify(error)}`);
  return data;
}

t.test('the client\'s types are what the spec\'s OpenAPI document generates', async (t) => {
  const generated = COMMENT_HEADER + astToString(await openapiTS(new URL(`file://${SPEC}`)));
  const committed = readFileSync(new URL('./helpers/ipfs-pinning-service-api.ts', import.meta.url), 'utf8').split('\n').slice(3).join('\n');
  t.equal(committed, generated);
});

t.test('an empty, malformed or wrong token is refused with 401 in the Failure shape', async (t) => {
  const tokens: Record<string, string | undefined> = {
    'no Authorization header': undefined,
    'an empty bearer token': 'Bearer ',
    'basic credentials': `Basic ${Buffer.from(`${KEYS.a.key}:${KEYS.a.secret}`).toString('base64')}`,
    'a key without its secret': `Bearer ${KEYS.a.key}`,
    'a wrong secret': `Bearer ${KEYS.a.key}:not-the-secret`,
    'another key\'s secret': `Bearer ${KEYS.a.key}:${KEYS.b.secret}`,
    'an unknown key': 'Bearer no-such-key:no-such-secret',
  };
  for (const [what, authorization] of Object.entries(tokens)) {
    for (const path of ['/pins', '/pins/some-request-id']) {
      const res = await request(`${endpoint}${path}`, { headers: authorization === undefined ? {} : { authorization } });
      t.equal(res.statusCode, 401, `${what}: GET ${path} is 401`);
      t.match(res.headers['www-authenticate'], /^Bearer realm=/, 'with a bearer challenge');
      const body = (await res.body.json()) as Failure;
      t.equal(body.error.reason, 'UNAUTHORIZED', `${what}: reason UNAUTHORIZED`);
      t.type(body.error.details, 'string');
    }
  }
  const created = await clientOf(`${KEYS.a.key}:wrong`).POST('/pins', { body: { cid: await content('never pinned\n') } });
  t.equal(created.response.status, 401, 'the generated client gets 401 on create');
  t.equal(created.error?.error.reason, 'UNAUTHORIZED');
});

t.test('create answers a queued PinStatus; the node pins it; get shows it pinned; metered in credits', async (t) => {
  const cid = await content('pin me through the service\n');
  const before = records.length;
  const { data, response } = await a.POST('/pins', { body: { cid, name: 'first.txt', meta: { app_id: 'tests' }, origins: ['/ip4/198.51.100.7/tcp/4001/p2p/12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN'] } });
  t.equal(response.status, 202);
  t.match(data, { status: 'queued', pin: { cid, name: 'first.txt', meta: { app_id: 'tests' } }, delegates: ['/ip4/203.0.113.1/tcp/4001/p2p/12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN'] });
  t.match(data!.requestid, /^[0-9a-f-]{36}$/, 'an opaque, unique request id');
  t.ok(!Number.isNaN(Date.parse(data!.created)), 'created is a timestamp');
  const done = await settled(a, data!.requestid);
  t.equal(done.status, 'pinned');
  t.same(done.pin.origins, ['/ip4/198.51.100.7/tcp/4001/p2p/12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN'], 'origins kept');
  t.equal(done.info?.dag_size, '35', 'info.dag_size: the DAG\'s bytes');
  t.equal(done.created, data!.created, 'created does not change');
  t.ok((await nodePins()).includes(cid), 'the node pins it');
  const usage = records.slice(before).filter((r) => r.keyId === 'psa-a');
  t.match(usage.find((r) => r.method === 'psa/create'), { credits: 10, failed: false, network: 'ipfs' }, 'create charged 10 credits');
  t.match(usage.find((r) => r.method === 'psa/get'), { credits: 1 }, 'get charged 1 credit');
  t.ok((await kuboPinsOf(kuboA)).includes(cid), 'pin/ls through the file API shows the key\'s pin');
});

async function kuboPinsOf(client: KuboRPCClient): Promise<string[]> {
  const cids: string[] = [];
  for await (const pin of client.pin.ls()) cids.push(pin.cid.toString());
  return cids;
}

t.test('content the node cannot find: failed, with the reason in info.status_details', async (t) => {
  const missing = (await node.add(new TextEncoder().encode('only hashed, never stored\n'), { onlyHash: true })).cid.toString();
  const { data, response } = await a.POST('/pins', { body: { cid: missing } });
  t.equal(response.status, 202);
  const done = await settled(a, data!.requestid);
  t.equal(done.status, 'failed');
  t.match(done.info?.status_details, /not found/);
  t.notOk((await nodePins()).includes(missing));
  const retried = await a.POST('/pins', { body: { cid: missing, name: 'again' } });
  t.equal(retried.response.status, 202, 'a failed pin may be requested again');
  t.not(retried.data!.requestid, data!.requestid, 'as a new request');
  t.equal((await settled(a, retried.data!.requestid)).status, 'failed');
  t.equal((await statusOf(a, data!.requestid)).status, 'failed', 'the first request stays, its own');
  t.equal((await a.DELETE('/pins/{requestid}', { params: { path: { requestid: data!.requestid } } })).response.status, 202, 'until deleted');
});

t.test('malformed requests: 400 BAD_REQUEST, and unknown request ids 404 NOT_FOUND', async (t) => {
  const bad = async (path: string, init: { method?: 'GET' | 'POST'; body?: string } = {}): Promise<void> => {
    const res = await request(`${endpoint}${path}`, { method: init.method ?? 'GET', headers: { authorization: `Bearer ${KEYS.a.key}:${KEYS.a.secret}`, 'content-type': 'application/json' }, ...(init.body === undefined ? {} : { body: init.body }) });
    t.equal(res.statusCode, 400, `${init.method ?? 'GET'} ${path} ${init.body ?? ''}: 400`);
    t.match(await res.body.json(), { error: { reason: 'BAD_REQUEST', details: /./ } });
  };
  for (const query of ['limit=0', 'limit=1001', 'limit=ten', 'status=lost', 'match=fuzzy', 'before=yesterday', 'after=2026-13-01', 'meta=%7Bnot-json', 'meta=%7B%22n%22%3A1%7D', 'cid=not-a-cid']) await bad(`/pins?${query}`);
  await bad('/pins', { method: 'POST', body: '{"name":"no cid"}' });
  await bad('/pins', { method: 'POST', body: '{"cid":"not-a-cid"}' });
  await bad('/pins', { method: 'POST', body: 'not json' });
  await bad('/pins', { method: 'POST', body: `{"cid":"${await content('named too long\n')}","name":"${'n'.repeat(256)}"}` });
  const missing = await a.GET('/pins/{requestid}', { params: { path: { requestid: 'no-such-request' } } });
  t.equal(missing.response.status, 404);
  t.equal(missing.error?.error.reason, 'NOT_FOUND');
  const res = await request(`${endpoint}/pins`, { method: 'PUT', headers: { authorization: `Bearer ${KEYS.a.key}:${KEYS.a.secret}` } });
  t.equal(res.statusCode, 405, 'PUT: 405');
  t.equal(res.headers.allow, 'GET, POST, OPTIONS');
  t.match(await res.body.json(), { error: { reason: 'METHOD_NOT_ALLOWED' } });
  const kubo = await request(`${endpoint}/api/v0/psa/create`, { method: 'POST', headers: { authorization: `Basic ${Buffer.from(`${KEYS.a.key}:${KEYS.a.secret}`).toString('base64')}` } });
  t.equal(kubo.statusCode, 404, 'the service\'s operations are not file API commands');
  await kubo.body.dump();
});

t.test('list: every filter of the spec, newest first, and paging with before/after/limit', async (t) => {
  // Twelve pins of key B, named and tagged so that each filter selects a known subset.
  const made: PinStatus[] = [];
  for (let i = 0; i < 12; i++) {
    const cid = await content(`listed pin ${i}\n`);
    made.push(await pinned(b, { cid, name: i % 3 === 0 ? `Report-${i}.PDF` : `photo-${i}.jpg`, meta: { app_id: i % 2 === 0 ? 'even' : 'odd', n: String(i) } }));
  }
  const newest = [...made].reverse();
  const ids = (results: readonly PinStatus[]): string[] => results.map((r) => r.requestid);

  const all = await list(b, {});
  t.equal(all.count, 12, 'count: every match');
  t.same(ids(all.results), ids(newest.slice(0, 10)), 'no filter: the 10 newest, newest first');

  // Paging back: before = the oldest created shown.
  const seen: string[] = [];
  let page = await list(b, { limit: 5 });
  t.equal(page.count, 12);
  while (page.results.length > 0) {
    seen.push(...ids(page.results));
    page = await list(b, { limit: 5, before: page.results[page.results.length - 1]!.created });
  }
  t.same(seen, ids(newest), 'pages of 5 by before: every pin once, newest first');
  const after = await list(b, { after: made[8]!.created });
  t.same(ids(after.results), ids(newest.slice(0, 3)), 'after: the newer ones only');
  t.equal(after.count, 3);
  const between = await list(b, { after: made[2]!.created, before: made[6]!.created });
  t.same(ids(between.results), ids([made[5]!, made[4]!, made[3]!]), 'after and before together');
  t.equal((await list(b, { limit: 1000 })).results.length, 12, 'limit up to 1000');

  const byCid = await list(b, { cid: [made[1]!.pin.cid, made[7]!.pin.cid] });
  t.same(ids(byCid.results), ids([made[7]!, made[1]!]), 'cid: the pins of those CIDs');
  t.same(ids((await list(b, { name: 'photo-4.jpg' })).results), [made[4]!.requestid], 'name: exact by default');
  t.same((await list(b, { name: 'PHOTO-4.JPG' })).count, 0, 'exact is case-sensitive');
  t.same(ids((await list(b, { name: 'PHOTO-4.JPG', match: 'iexact' })).results), [made[4]!.requestid], 'iexact');
  t.same(ids((await list(b, { name: 'Report', match: 'partial' })).results), ids([made[9]!, made[6]!, made[3]!, made[0]!]), 'partial');
  t.same((await list(b, { name: 'report', match: 'partial' })).count, 0, 'partial is case-sensitive');
  t.same(ids((await list(b, { name: '.pdf', match: 'ipartial' })).results), ids([made[9]!, made[6]!, made[3]!, made[0]!]), 'ipartial');
  t.same(ids((await list(b, { meta: JSON.stringify({ app_id: 'odd' }) })).results), ids(newest.filter((_, i) => i % 2 === 0)), 'meta: pins whose meta holds every pair');
  t.same(ids((await list(b, { meta: JSON.stringify({ app_id: 'odd', n: '5' }) })).results), [made[5]!.requestid]);
  t.same((await list(b, { status: ['queued', 'pinning'] })).count, 0, 'status: none is in progress');
  t.same((await list(b, { status: ['pinned'] })).count, 12, 'status: pinned');
  t.same((await list(b, { status: ['failed'] })).count, 0, 'B has no failed pin');
  const failedOfA = await list(a, { status: ['failed'] });
  t.equal(failedOfA.count, 1, 'A\'s failed request is listed by status');
  t.notOk((await list(a, {})).results.some((r) => r.status === 'failed'), 'and not by default (pinned only)');
  const both = await list(a, { status: ['pinned', 'failed'] });
  t.equal(both.count, (await list(a, {})).count + 1, 'several statuses');
  const usage = records.filter((r) => r.keyId === 'psa-b' && r.method === 'psa/list');
  t.ok(usage.length > 0 && usage.every((r) => r.credits === 1), 'each list charged 1 credit');
});

t.test('two keys: neither sees, replaces nor deletes the other\'s pins', async (t) => {
  const cid = await content('A\'s own\n');
  const ofA = await pinned(a, { cid, name: 'mine' });
  t.notOk((await list(b, { cid: [cid] })).count, 'B does not list A\'s pin');
  t.equal((await b.GET('/pins/{requestid}', { params: { path: { requestid: ofA.requestid } } })).response.status, 404, 'nor gets it');
  t.equal((await b.POST('/pins/{requestid}', { params: { path: { requestid: ofA.requestid } }, body: { cid } })).response.status, 404, 'nor replaces it');
  t.equal((await b.DELETE('/pins/{requestid}', { params: { path: { requestid: ofA.requestid } } })).response.status, 404, 'nor deletes it');
  t.equal((await statusOf(a, ofA.requestid)).status, 'pinned', 'A\'s pin is untouched');

  const ofB = await pinned(b, { cid, name: 'mine too' });
  t.not(ofB.requestid, ofA.requestid, 'B pins the same CID as a request of its own');
  const deleted = await b.DELETE('/pins/{requestid}', { params: { path: { requestid: ofB.requestid } } });
  t.equal(deleted.response.status, 202);
  t.ok((await nodePins()).includes(cid), 'the node keeps the content: A pins it');
  t.equal((await statusOf(a, ofA.requestid)).status, 'pinned');

});

t.test('the same CID pinned again is a new request with its own requestid; deleting one keeps the other and the node\'s pin', async (t) => {
  const cid = await content('pinned twice by one key\n');
  const first = await pinned(a, { cid, name: 'first', meta: { copy: '1' } });
  const second = await pinned(a, { cid, name: 'second', meta: { copy: '2' } });
  t.not(second.requestid, first.requestid, 'a different requestid, as the spec says');
  t.match(second, { status: 'pinned', pin: { cid, name: 'second', meta: { copy: '2' } } });
  const both = await list(a, { cid: [cid] });
  t.equal(both.count, 2, 'both requests listed');
  t.same(both.results.map((r) => r.requestid), [second.requestid, first.requestid], 'newest first');
  t.equal((await list(a, { cid: [cid], meta: JSON.stringify({ copy: '1' }) })).results[0]?.requestid, first.requestid, 'filters see each request');
  t.equal((await kuboPinsOf(kuboA)).filter((c) => c === cid).length, 1, 'pin/ls shows the CID once');

  t.equal((await a.DELETE('/pins/{requestid}', { params: { path: { requestid: first.requestid } } })).response.status, 202);
  t.equal((await a.GET('/pins/{requestid}', { params: { path: { requestid: first.requestid } } })).response.status, 404, 'that request is gone');
  t.equal((await statusOf(a, second.requestid)).status, 'pinned', 'the other stays');
  t.ok((await nodePins()).includes(cid), 'the node keeps the content for it');
  t.equal((await a.DELETE('/pins/{requestid}', { params: { path: { requestid: second.requestid } } })).response.status, 202);
  await until('the node drops content no request holds', async () => !(await nodePins()).includes(cid));
});

t.test('replace: a new request for the new pin, the old one gone, the node drops the old content after the new is pinned', async (t) => {
  const v1 = await content('version 1 of a dataset\n');
  const v2 = await content('version 2 of a dataset\n');
  const old = await pinned(a, { cid: v1, name: 'dataset' });
  const { data, response } = await a.POST('/pins/{requestid}', { params: { path: { requestid: old.requestid } }, body: { cid: v2, name: 'dataset', meta: { version: '2' } } });
  t.equal(response.status, 202);
  t.not(data!.requestid, old.requestid, 'a new request id');
  t.equal(data!.pin.cid, v2);
  t.equal((await a.GET('/pins/{requestid}', { params: { path: { requestid: old.requestid } } })).response.status, 404, 'the old request is gone');
  const done = await settled(a, data!.requestid);
  t.match(done, { status: 'pinned', pin: { cid: v2, meta: { version: '2' } } });
  await until('the node drops the replaced content', async () => !(await nodePins()).includes(v1));
  t.ok((await nodePins()).includes(v2));

  const renamed = await a.POST('/pins/{requestid}', { params: { path: { requestid: done.requestid } }, body: { cid: v2, name: 'dataset-renamed' } });
  t.equal(renamed.response.status, 202, 'replacing with the same CID renames it');
  t.match(renamed.data, { status: 'pinned', pin: { cid: v2, name: 'dataset-renamed' } });
  t.equal((await list(a, { name: 'dataset-renamed' })).count, 1);
  t.ok((await nodePins()).includes(v2), 'the node keeps it');
});

t.test('delete: 202, the request gone, the node unpins content no key pins', async (t) => {
  const cid = await content('short-lived\n');
  const pin = await pinned(a, { cid });
  const { response } = await a.DELETE('/pins/{requestid}', { params: { path: { requestid: pin.requestid } } });
  t.equal(response.status, 202);
  t.equal((await a.GET('/pins/{requestid}', { params: { path: { requestid: pin.requestid } } })).response.status, 404);
  t.equal((await list(a, { cid: [cid] })).count, 0);
  t.notOk((await nodePins()).includes(cid), 'unpinned on the node');
  t.equal((await a.DELETE('/pins/{requestid}', { params: { path: { requestid: pin.requestid } } })).response.status, 404, 'deleted once');
});

t.test('the file API\'s pins are the key\'s pins here too, named by their CID', async (t) => {
  const added = (await kuboA.add(new TextEncoder().encode('added through the file API\n'))).cid.toString();
  const listed = await list(a, { cid: [added] });
  t.equal(listed.count, 1);
  t.match(listed.results[0], { requestid: added, status: 'pinned', pin: { cid: added } });
  t.equal((await statusOf(a, added)).pin.cid, added, 'get by its CID');
  t.equal((await b.GET('/pins/{requestid}', { params: { path: { requestid: added } } })).response.status, 404, 'not another key\'s');
  t.equal((await a.DELETE('/pins/{requestid}', { params: { path: { requestid: added } } })).response.status, 202, 'deleted through the service');
  t.notOk((await kuboPinsOf(kuboA)).includes(added), 'gone from pin/ls');
});

t.test('the file API\'s pin/rm of a CID removes the key\'s whole hold of it, its pin requests included', async (t) => {
  const cid = await content('held through the service and the file API\n');
  const one = await pinned(a, { cid, name: 'one' });
  const two = await pinned(a, { cid, name: 'two' });
  const ofB = await pinned(b, { cid, name: 'B\'s' });
  await kuboA.pin.add(CID.parse(cid));
  t.equal((await list(a, { cid: [cid] })).count, 3, 'two requests and the file API\'s pin');
  t.equal((await kuboPinsOf(kuboA)).filter((c) => c === cid).length, 1, 'pin/ls: the CID once');
  await kuboA.pin.rm(CID.parse(cid));
  t.equal((await list(a, { cid: [cid], status: ['queued', 'pinning', 'pinned', 'failed'] })).count, 0, 'every pin of the CID gone');
  for (const gone of [one, two]) t.equal((await a.GET('/pins/{requestid}', { params: { path: { requestid: gone.requestid } } })).response.status, 404);
  t.notOk((await kuboPinsOf(kuboA)).includes(cid), 'gone from pin/ls');
  t.equal((await statusOf(b, ofB.requestid)).status, 'pinned', 'another key\'s request is untouched');
  t.ok((await nodePins()).includes(cid), 'and holds the content on the node');
  t.equal((await b.DELETE('/pins/{requestid}', { params: { path: { requestid: ofB.requestid } } })).response.status, 202);
});

t.test('storageBytes: a pin past the allowance fails, a key at its allowance is refused with 409 INSUFFICIENT_FUNDS (the spec\'s status)', async (t) => {
  // "hello world\n" is one 20-byte block, "IPFS\n" 13 bytes; 92 bytes of text make a 100-byte block.
  const hello = await content('hello world\n');
  const ipfs = await content('IPFS\n');
  const big = await content('x'.repeat(92));
  t.equal((await pinned(c, { cid: hello })).info?.dag_size, '20');
  t.equal((await pinned(c, { cid: ipfs })).info?.dag_size, '13');
  const { data } = await c.POST('/pins', { body: { cid: big } });
  const refused = await settled(c, data!.requestid);
  t.equal(refused.status, 'failed', '33 + 100 bytes pass the 100 allowed: failed');
  t.match(refused.info?.status_details, /^storage limit reached: the plan allows 100 bytes pinned, the key has 33, adding 100$/);
  t.notOk((await nodePins()).includes(big), 'the node does not keep it');
  const storage = await request(`${gw.origin}/admin/v1/keys/psa-c`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  t.match(await storage.body.json(), { storage: { bytes: 33 } }, 'the key\'s stored bytes: its pinned pins only');
  t.equal((await pinned(c, { cid: hello })).info?.dag_size, '20', 'a second request of a CID the key pins');
  const again = await request(`${gw.origin}/admin/v1/keys/psa-c`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  t.match(await again.body.json(), { storage: { bytes: 33 } }, 'counts the CID once: the node stores it once');

  // A failed pin holds nothing: content another key pinned goes once that key deletes its pin.
  const shared = await content('y'.repeat(92));
  const ofA = await pinned(a, { cid: shared });
  const tooBig = await c.POST('/pins', { body: { cid: shared } });
  t.equal((await settled(c, tooBig.data!.requestid)).status, 'failed', 'too big for C');
  t.ok((await nodePins()).includes(shared), 'the node keeps it for A');
  t.equal((await a.DELETE('/pins/{requestid}', { params: { path: { requestid: ofA.requestid } } })).response.status, 202);
  t.notOk((await nodePins()).includes(shared), 'C\'s failed pin does not keep it on the node');

  t.equal((await pinned(d, { cid: hello })).status, 'pinned', 'a 20-byte allowance holds 20 bytes');
  const before = records.length;
  const full = await d.POST('/pins', { body: { cid: ipfs } });
  t.equal(full.response.status, 409, 'a key at its allowance: 409, as the spec\'s response table says');
  t.equal(full.response.headers.get('x-tollgate-error'), 'STORAGE_LIMIT_REACHED', 'the gateway\'s error named');
  t.match(full.error, { error: { reason: 'INSUFFICIENT_FUNDS', details: /^storage limit reached: the plan allows 20 bytes pinned, the key has 20$/ } });
  t.equal((await list(d, { status: ['queued', 'pinning', 'pinned', 'failed'] })).count, 1, 'nothing recorded');
  t.match(records.slice(before).find((r) => r.method === 'psa/create'), { credits: 0, failed: true }, 'and nothing charged');
});
