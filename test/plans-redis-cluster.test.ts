/**
 * Managed plans and the usage export on a real Redis Cluster (three masters, three replicas): every plan
 * command stays in one slot, a plan change is announced to gateways whatever node they subscribed
 * through, and the export reads keys whose slots fall on every master, one key at a time.
 */
import t from 'tap';
import { apiKeyHash, type StoredKey } from '../core/store-api.js';
import type { GatewayConfigInput } from '../core/index.js';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { createRedisStore, ledgerRedis } from '../plugins/ledger-redis/index.js';
import { hashTag } from '../plugins/ledger-redis/key-names.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { post, rpc } from './helpers/json-rpc.js';
import { startTinyUpstream } from './helpers/tiny-upstream.js';
import { redisAvailable } from './helpers/redis-server.js';
import { startRedisCluster } from './helpers/redis-cluster.js';
import { until } from './helpers/until.js';

if (!(await redisAvailable())) {
  t.fail('redis-server is not installed (apt-get install redis-server); the Redis Cluster tests need it');
  process.exit(1);
}

const PREFIX = 'plans:';
const cluster = await startRedisCluster();
t.teardown(() => cluster.stop());
const upstream = await startTinyUpstream();
t.teardown(() => upstream.close());
const nodes = cluster.seeds.split(',');
/** Config key ids whose hash tags fall on every master (checked below). */
const KEYS = Array.from({ length: 9 }, (_, i) => `load-${i}`);

const config: GatewayConfigInput = {
  keys: KEYS.map((id) => ({ key: `cluster-plan-key-${id}`, id, plan: 'core' })),
  networks: [
    { name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url }] },
    { name: 'polygon', families: ['evm'], upstreams: [{ url: upstream.url }] },
  ],
};

function managedKey(id: string, apiKey: string, plan: string): StoredKey {
  const now = Date.now();
  return { id, plan, keyHash: apiKeyHash(apiKey), keyHint: apiKey.slice(-4), createdAt: now, updatedAt: now };
}

t.test('plans and the usage export on a Redis Cluster', async (t) => {
  const slots = await Promise.all(KEYS.map(async (id) => Number(await cluster.cli(['cluster', 'keyslot', hashTag(id)]))));
  t.ok([0, 1, 2].every((third) => slots.some((slot) => Math.floor(slot / 5462) === third)), `the keys' slots fall on every master (${slots.join(', ')})`);

  const store = createRedisStore({ cluster: { nodes }, prefix: PREFIX });
  await store.open();
  t.teardown(() => store.close());
  t.equal(await store.plans.insert({ name: 'silver', dailyCredits: 1_000_000, creditsPerSecond: 10_000, failover: false, createdAt: 1, updatedAt: 1 }), true);
  t.equal(await store.keys.insert(managedKey('managed', 'cluster-managed-api-key-0001', 'silver')), true);

  const gateways: TestGateway[] = await Promise.all([0, 1].map(() => startTestGateway(config, [ledgerRedis({ cluster: { nodes }, prefix: PREFIX, usageFlushMs: 50 }), httpTransport(), evmFamily()])));
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await Promise.all(gateways.map((g) => g.close()));
  };
  t.teardown(close);
  const status = async (gateway: TestGateway): Promise<number> => (await post(gateway.url('eth', 'cluster-managed-api-key-0001'), rpc('eth_chainId', []))).status;
  for (const gateway of gateways) t.equal(await status(gateway), 200, 'a managed plan read at start serves its key');

  t.match(await store.plans.update('silver', { dailyCredits: 0 }, 2), { dailyCredits: 0, creditsPerSecond: 10_000, updatedAt: 2 });
  await until('both gateways apply the change', async () => (await status(gateways[0]!)) === 402 && (await status(gateways[1]!)) === 402);
  t.equal(await store.plans.delete('silver'), true);
  await until('both gateways forget the deleted plan', async () => (await status(gateways[0]!)) === 401 && (await status(gateways[1]!)) === 401);
  t.same(await store.plans.list(), []);

  for (const [i, id] of KEYS.entries()) {
    const gateway = gateways[i % 2]!;
    t.equal((await post(gateway.url(i % 3 === 0 ? 'polygon' : 'eth', `cluster-plan-key-${id}`), rpc('eth_blockNumber', []))).status, 200);
  }
  await close();
  const today = new Date().toISOString().slice(0, 10);
  const rows = [];
  for await (const row of store.usage.usageRows!(KEYS, today, today)) rows.push(row);
  t.same(
    rows.map((r) => [r.keyId, r.network, r.method, r.calls, r.credits]),
    KEYS.map((id, i) => [id, i % 3 === 0 ? 'polygon' : 'eth', 'eth_blockNumber', 1, 80]),
    'one row per key, in the order asked, from every master',
  );
});
