/**
 * The Redis cache store on a real Redis Cluster: entries and their tag sets in different slots, a tag
 * dropped across slots, two instances sharing entries; a plain URL that is a Cluster node refused.
 */
import t from 'tap';
import pino from 'pino';
import { RedisCacheStore } from '../plugins/cache-redis/index.js';
import { resolveRedisCacheSettings } from '../plugins/cache-redis/settings.js';
import { startRedisCluster } from './helpers/redis-cluster.js';

const cluster = await startRedisCluster();
t.teardown(() => cluster.stop());
const logger = pino({ level: 'silent' });

async function openStore(settings: Record<string, unknown>): Promise<RedisCacheStore> {
  const store = new RedisCacheStore(resolveRedisCacheSettings([{ connectTimeoutMs: 10_000, commandTimeoutMs: 5_000, ...settings }]), logger);
  await store.open();
  return store;
}

t.test('two instances share entries across slots; a tag is dropped on every slot', async (t) => {
  const nodes = cluster.seeds.split(',');
  const a = await openStore({ cluster: { nodes } });
  t.teardown(() => a.close());
  const b = await openStore({ cluster: { nodes: nodes.slice(3) } });
  t.teardown(() => b.close());
  const names = Array.from({ length: 30 }, (_, i) => `eth:block:${i}`);
  const large = new Uint8Array(4096).fill(7);
  for (const name of names) await a.set(name, name.endsWith(':0') ? large : new TextEncoder().encode(name), 60_000, 'eth:unfinalized');
  await a.set('eth:finalized:1', new TextEncoder().encode('kept'), 60_000, 'eth:finalized');
  t.same(Buffer.from((await b.get('eth:block:0'))!), Buffer.from(large), 'a large entry, stored compressed, read by the other instance');
  t.equal(new TextDecoder().decode(await b.get('eth:block:7')), 'eth:block:7');
  const slots = new Set(await Promise.all(names.map(async (name) => (await cluster.cli(['cluster', 'keyslot', `tollgate:cache:${name}`])).trim())));
  t.ok(slots.size > 20, `the entries fall in ${slots.size} slots`);
  await b.dropTag('eth:unfinalized');
  t.same(await Promise.all(names.map((name) => a.get(name))), names.map(() => undefined), 'every entry of the tag is gone, whatever its slot');
  t.equal(new TextDecoder().decode(await a.get('eth:finalized:1')), 'kept', 'another tag is untouched');
});

t.test('a plain URL that is a Cluster node is refused with one line', async (t) => {
  const node = cluster.nodes[0]!;
  await t.rejects(openStore({ url: `redis://${node.address}` }), {
    message: `Redis at ${node.address} is a node of a Redis Cluster: name its nodes with plugins.cache-redis.cluster.nodes instead of plugins.cache-redis.url`,
  });
});
