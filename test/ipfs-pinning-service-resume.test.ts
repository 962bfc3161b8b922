import t from 'tap';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import createClient, { type Client } from 'openapi-fetch';
import { create } from 'kubo-rpc-client';
import { ledgerSqlite } from '../plugins/ledger-sqlite/index.js';
import { startIpfsGateway, type IpfsTestGateway } from './helpers/ipfs-gateway.js';
import type { paths } from './helpers/ipfs-pinning-service-api.js';
import { until } from './helpers/until.js';

// A gateway that stops while the node works on a pin request leaves it `pinning` in the store. The
// gateways that serve the key next (two, on one SQLite file, as two workers) take it up on the key's
// first call and drive it to `pinned`; each state change is a compare-and-set, so the two agree.

const dir = mkdtempSync(join(tmpdir(), 'tollgate-psa-resume-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const KEY = { key: 'psa-resume-key-0001', secret: 'psa-resume-secret', id: 'psa-resume', plan: 'growth' };
const database = join(dir, 'tollgate.db');

function start(options: { dataDir?: string; upstream?: string; pinTimeoutMs?: number }): Promise<IpfsTestGateway> {
  return startIpfsGateway({
    dataDir: options.dataDir ?? join(dir, 'unused-ipfs'),
    ...(options.upstream === undefined ? {} : { upstreams: [{ url: options.upstream }] }),
    config: {
      // The stopping gateway's close gives up on the held node request soon.
      server: { drainTimeoutMs: 500 },
      keys: [KEY],
      plugins: {
        ipfs: { secretChecksPerSourcePerSecond: 50, secretChecksPerSecond: 50, drainTimeoutMs: 100, pinningService: { pinTimeoutMs: options.pinTimeoutMs ?? 30_000 } },
        'ledger-sqlite': { path: database },
      },
    },
    plugins: [ledgerSqlite()],
  });
}

function clientOf(gw: IpfsTestGateway): Client<paths> {
  return createClient<paths>({ baseUrl: `${gw.origin}/ipfs`, headers: { authorization: `Bearer ${KEY.key}:${KEY.secret}` } });
}

async function statusOn(gw: IpfsTestGateway, requestid: string): Promise<string | undefined> {
  return (await clientOf(gw).GET('/pins/{requestid}', { params: { path: { requestid } } })).data?.status;
}

t.test('a request left pinning by a stopped gateway is taken up and pinned by the next ones, once', async (t) => {
  const serving = await start({ dataDir: join(dir, 'ipfs') });
  t.teardown(() => serving.close());
  const nodeUrl = serving.devnet.helia.instance()!.url;
  const node = create({ url: `${nodeUrl}/api/v0` });
  const cid = (await node.add(new TextEncoder().encode('pinned after a restart\n'), { pin: false })).cid.toString();

  // A node that never finishes a pin: the first gateway's request stays `pinning` until it stops.
  const held: ServerResponse[] = [];
  const stuck = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.url?.startsWith('/api/v0/pin/add') === true) return void held.push(res);
    res.writeHead(500, { 'content-type': 'application/json' }).end('{"Message":"not this node","Code":0,"Type":"error"}');
  });
  await new Promise<void>((resolve) => stuck.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => { stuck.closeAllConnections(); stuck.close(() => resolve()); }));
  const stopping = await start({ upstream: `http://127.0.0.1:${(stuck.address() as AddressInfo).port}`, pinTimeoutMs: 8_000 });
  const { data } = await clientOf(stopping).POST('/pins', { body: { cid, name: 'resumed' } });
  const requestid = data!.requestid;
  await until('the node is asked to pin', () => held.length > 0);
  t.equal(await statusOn(stopping, requestid), 'pinning');
  await stopping.close();

  const other = await start({ upstream: nodeUrl });
  t.teardown(() => other.close());
  // The key's first call on each: both take the request up.
  const [one, two] = await Promise.all([statusOn(serving, requestid), statusOn(other, requestid)]);
  t.ok(one !== undefined && two !== undefined, 'both gateways find the request');
  await until('pinned after the restart', async () => (await statusOn(serving, requestid)) === 'pinned');
  t.equal(await statusOn(other, requestid), 'pinned', 'the same end on both');
  const pins: string[] = [];
  for await (const pin of node.pin.ls()) pins.push(pin.cid.toString());
  t.ok(pins.includes(cid), 'the node pins the content');
  const listed = (await clientOf(other).GET('/pins', { params: { query: { cid: [cid] } } })).data;
  t.equal(listed?.count, 1, 'one request, not two');
  t.match(listed?.results[0], { requestid, status: 'pinned', pin: { cid, name: 'resumed' }, created: data!.created });
});
