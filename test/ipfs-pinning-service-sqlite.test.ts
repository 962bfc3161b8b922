import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import createClient, { type Client } from 'openapi-fetch';
import { create } from 'kubo-rpc-client';
import { ledgerSqlite } from '../plugins/ledger-sqlite/index.js';
import { startIpfsGateway, type IpfsTestGateway } from './helpers/ipfs-gateway.js';
import type { paths } from './helpers/ipfs-pinning-service-api.js';
import { until } from './helpers/until.js';

// With the SQLite store, pin requests outlive a gateway restart: the request id, status, name, meta,
// origins and created time as they were, still the key's only.

const dir = mkdtempSync(join(tmpdir(), 'tollgate-psa-sqlite-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const KEYS = {
  a: { key: 'psa-sqlite-key-a-0001', secret: 'psa-sqlite-secret-a', id: 'psa-sq-a', plan: 'growth' },
  b: { key: 'psa-sqlite-key-b-0001', secret: 'psa-sqlite-secret-b', id: 'psa-sq-b', plan: 'growth' },
};

function start(): Promise<IpfsTestGateway> {
  return startIpfsGateway({
    dataDir: join(dir, 'ipfs'),
    config: {
      keys: Object.values(KEYS),
      plugins: {
        ipfs: { secretChecksPerSourcePerSecond: 50, secretChecksPerSecond: 50 },
        'ledger-sqlite': { path: join(dir, 'tollgate.db') },
      },
    },
    plugins: [ledgerSqlite()],
  });
}

function clientOf(gw: IpfsTestGateway, key: { key: string; secret: string }): Client<paths> {
  return createClient<paths>({ baseUrl: `${gw.origin}/ipfs`, headers: { authorization: `Bearer ${key.key}:${key.secret}` } });
}

t.test('pin requests outlive a restart', async (t) => {
  const first = await start();
  const node = create({ url: `${first.devnet.helia.instance()!.url}/api/v0` });
  const cid = (await node.add(new TextEncoder().encode('kept across restarts\n'), { pin: false })).cid.toString();
  const { data } = await clientOf(first, KEYS.a).POST('/pins', { body: { cid, name: 'kept', meta: { app_id: 'sqlite' }, origins: ['/ip4/198.51.100.7/tcp/4001/p2p/12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN'] } });
  await until('pinned', async () => (await clientOf(first, KEYS.a).GET('/pins/{requestid}', { params: { path: { requestid: data!.requestid } } })).data?.status === 'pinned');
  const before = (await clientOf(first, KEYS.a).GET('/pins/{requestid}', { params: { path: { requestid: data!.requestid } } })).data;
  await first.close();

  const second = await start();
  t.teardown(() => second.close());
  const after = await clientOf(second, KEYS.a).GET('/pins/{requestid}', { params: { path: { requestid: data!.requestid } } });
  t.same(after.data, before, 'the same PinStatus after the restart');
  t.match(after.data, { status: 'pinned', created: data!.created, pin: { cid, name: 'kept', meta: { app_id: 'sqlite' } } });
  t.equal((await clientOf(second, KEYS.b).GET('/pins', {})).data?.count, 0, 'still not B\'s');
  t.equal((await clientOf(second, KEYS.a).DELETE('/pins/{requestid}', { params: { path: { requestid: data!.requestid } } })).response.status, 202);
});
