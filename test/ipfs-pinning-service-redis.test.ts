import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import createClient, { type Client } from 'openapi-fetch';
import { create } from 'kubo-rpc-client';
import { ledgerRedis } from '../plugins/ledger-redis/index.js';
import { startIpfsGateway, type IpfsTestGateway } from './helpers/ipfs-gateway.js';
import type { paths } from './helpers/ipfs-pinning-service-api.js';
import { startRedisServer } from './helpers/redis-server.js';
import { until } from './helpers/until.js';

// Two gateway instances on one Redis and one node, as a fleet runs: a pin request made through one
// instance is the key's through the other (listed, settled, deleted there), and the allowance is one.

const redis = await startRedisServer();
const dir = mkdtempSync(join(tmpdir(), 'tollgate-psa-redis-'));
const gateways: IpfsTestGateway[] = [];
t.teardown(async () => {
  for (const gw of gateways.reverse()) await gw.close();
  await redis.stop();
  rmSync(dir, { recursive: true, force: true });
});
const KEY = { key: 'psa-redis-key-a-0001', secret: 'psa-redis-secret-a', id: 'psa-rd-a', plan: 'starter' };

function start(upstream?: string): Promise<IpfsTestGateway> {
  return startIpfsGateway({
    dataDir: join(dir, 'ipfs'),
    ...(upstream === undefined ? {} : { upstreams: [{ url: upstream }] }),
    config: {
      keys: [KEY],
      plans: { starter: { dailyCredits: 1_000_000, creditsPerSecond: 1_000, failover: false } },
      plugins: {
        ipfs: { secretChecksPerSourcePerSecond: 50, secretChecksPerSecond: 50, plans: { starter: { readsPerSecond: 50, writesPerSecond: 50, storageBytes: 20 } } },
        'ledger-redis': { url: redis.url, prefix: 'psa-fleet:' },
      },
    },
    plugins: [ledgerRedis()],
  });
}

const one = await start();
gateways.push(one);
const two = await start(one.devnet.helia.instance()!.url);
gateways.push(two);
const node = create({ url: `${one.devnet.helia.instance()!.url}/api/v0` });

function clientOf(gw: IpfsTestGateway): Client<paths> {
  return createClient<paths>({ baseUrl: `${gw.origin}/ipfs`, headers: { authorization: `Bearer ${KEY.key}:${KEY.secret}` } });
}

t.test('a pin request made through one instance is the key\'s through the other', async (t) => {
  const hello = (await node.add(new TextEncoder().encode('hello world\n'), { pin: false })).cid.toString();
  const { data } = await clientOf(one).POST('/pins', { body: { cid: hello, name: 'hello', meta: { fleet: 'yes' } } });
  t.equal(data?.status, 'queued');
  await until('settled, as seen through the other instance', async () => (await clientOf(two).GET('/pins/{requestid}', { params: { path: { requestid: data!.requestid } } })).data?.status === 'pinned');
  const listed = await clientOf(two).GET('/pins', { params: { query: { name: 'hello' } } });
  t.match(listed.data, { count: 1, results: [{ requestid: data!.requestid, pin: { cid: hello, meta: { fleet: 'yes' } }, info: { dag_size: '20' } }] });

  const other = (await node.add(new TextEncoder().encode('IPFS\n'), { pin: false })).cid.toString();
  const full = await clientOf(two).POST('/pins', { body: { cid: other } });
  t.equal(full.response.status, 409, 'the allowance filled through one instance holds on the other (the spec\'s 409)');
  t.equal(full.error?.error.reason, 'INSUFFICIENT_FUNDS');

  t.equal((await clientOf(two).DELETE('/pins/{requestid}', { params: { path: { requestid: data!.requestid } } })).response.status, 202, 'deleted through the other instance');
  t.equal((await clientOf(one).GET('/pins/{requestid}', { params: { path: { requestid: data!.requestid } } })).response.status, 404, 'gone for both');
});
