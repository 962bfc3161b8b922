import t from 'tap';
import { Redis } from 'ioredis';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { responseCache, type CachePlugin } from '../plugins/cache/index.js';
import { cacheKey } from '../plugins/cache/cache-key.js';
import { CACHE_HEADER } from '../plugins/cache/response-cache.js';
import { cacheRedis } from '../plugins/cache-redis/index.js';
import { startAnvil } from '@tollgate/devnet';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { startCountingRelay, type CountingRelay } from './helpers/counting-relay.js';
import { post, rpc } from './helpers/json-rpc.js';
import { redisAvailable, startRedisServer } from './helpers/redis-server.js';
import { closedPort } from './helpers/closed-port.js';

// Two gateway instances sharing one Redis cache store, each in front of the same Anvil through a
// relay of its own, so the test sees which instance reached the node.
if (!(await redisAvailable())) {
  t.fail('redis-server is not installed (apt-get install redis-server); the Redis cache tests need it');
  process.exit(1);
}
const redis = await startRedisServer();
t.teardown(() => redis.stop());
const anvil = await startAnvil();
t.teardown(() => anvil.stop());
const accounts = await anvil.rpc<string[]>('eth_accounts');
const transfer = async (value = '0x1'): Promise<string> => {
  const hash = await anvil.rpc<string>('eth_sendTransaction', [{ from: accounts[0], to: accounts[1], value }]);
  // Anvil may answer before it mined the block: wait for the receipt, unless mining is off on purpose.
  if (await anvil.rpc<boolean>('anvil_getAutomine')) while ((await anvil.rpc('eth_getTransactionReceipt', [hash])) === null);
  return hash;
};
for (let i = 0; i < 3; i++) await transfer();

const KEY = 'cache-redis-key-0001';
interface Instance { readonly gw: TestGateway; readonly relay: CountingRelay; readonly plugin: CachePlugin; url: string }
async function instance(redisUrl = redis.url): Promise<Instance> {
  const relay = await startCountingRelay(anvil.url);
  t.teardown(() => relay.close());
  // Timeouts far above any Redis round trip, so a busy machine cannot turn a hit into a miss.
  const plugin = responseCache({ headIntervalMs: 3_600_000, lookupTimeoutMs: 10_000 });
  const gw = await startTestGateway(
    { keys: [{ key: KEY, plan: 'custom' }], networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: relay.url }] }] },
    [httpTransport(), evmFamily(), cacheRedis({ url: redisUrl, compressAboveBytes: 256, connectTimeoutMs: 500, commandTimeoutMs: 10_000 }), plugin],
  );
  t.teardown(() => gw.close());
  await plugin.cache.refreshHead('eth');
  return { gw, relay, plugin, url: gw.url('eth', KEY) };
}
const a = await instance();
const b = await instance();
const client = new Redis(redis.url);
t.teardown(() => client.disconnect());

t.test('an answer one instance fetched is a hit on the other, stored compressed when large', async (t) => {
  const call = rpc('eth_getBlockByNumber', ['0x2', true]);
  const first = await post(a.url, call);
  t.equal(first.headers[CACHE_HEADER], 'miss');
  const second = await post(b.url, { ...call, id: 'b' });
  t.equal(second.headers[CACHE_HEADER], 'hit');
  t.same(second.json, { ...(first.json as object), id: 'b' });
  t.equal(b.relay.count('eth_getBlockByNumber', ['0x2', true]), 0, 'the second instance did not reach the node');
  t.same((first.json as { result: unknown }).result, await anvil.rpc('eth_getBlockByNumber', ['0x2', true]));
  const stored = await client.getBuffer(`tollgate:cache:${cacheKey('eth', 'eth_getBlockByNumber', ['0x2', true])}`);
  t.equal(stored?.[0], 1, 'stored gzip-compressed');
  t.ok(stored!.length < Buffer.byteLength(JSON.stringify((first.json as { result: unknown }).result)), 'smaller than the answer');
  const small = await post(a.url, rpc('eth_chainId', []));
  t.equal((await post(b.url, rpc('eth_chainId', []))).headers[CACHE_HEADER], 'hit');
  t.equal((await client.getBuffer(`tollgate:cache:${cacheKey('eth', 'eth_chainId', [])}`))?.[0], 0, 'a small value is stored as is');
  t.ok(small.json);
});

t.test('a reorg seen by one instance drops the shared unfinalized entries', async (t) => {
  const snapshot = await anvil.rpc<string>('evm_snapshot');
  await transfer();
  await a.plugin.cache.refreshHead('eth');
  await b.plugin.cache.refreshHead('eth');
  const height = `0x${a.plugin.cache.headOf('eth')!.number.toString(16)}`;
  await post(a.url, rpc('eth_getBlockByNumber', [height, false]));
  t.equal((await post(b.url, rpc('eth_getBlockByNumber', [height, false]))).headers[CACHE_HEADER], 'hit');
  await anvil.rpc('evm_revert', [snapshot]);
  // Another transaction, so the replacing block differs whatever its timestamp.
  await transfer('0x2');
  await a.plugin.cache.refreshHead('eth');
  t.equal(a.plugin.cache.counters.reorgs, 1);
  const after = await post(b.url, rpc('eth_getBlockByNumber', [height, false]));
  t.equal(after.headers[CACHE_HEADER], 'miss', 'the other instance no longer finds it');
  t.same((after.json as { result: unknown }).result, await anvil.rpc('eth_getBlockByNumber', [height, false]));
});

t.test('a store that fails degrades to misses, never to errors', async (t) => {
  const call = rpc('eth_getBlockByNumber', ['0x1', false]);
  await post(a.url, call);
  t.equal((await post(a.url, call)).headers[CACHE_HEADER], 'hit');
  await redis.kill();
  const failures = a.plugin.cache.counters.storeFailures;
  const before = a.relay.count('eth_getBlockByNumber', ['0x1', false]);
  for (let i = 0; i < 3; i++) {
    const answer = await post(a.url, { ...call, id: i });
    t.equal(answer.status, 200);
    t.equal(answer.headers[CACHE_HEADER], 'miss');
    t.same(answer.json, { jsonrpc: '2.0', id: i, result: await anvil.rpc('eth_getBlockByNumber', ['0x1', false]) });
  }
  t.equal(a.relay.count('eth_getBlockByNumber', ['0x1', false]), before + 3, 'each call went to the node');
  t.ok(a.plugin.cache.counters.storeFailures > failures, 'the failures were counted');
});

t.test('a gateway whose Redis is not there starts and serves misses', async (t) => {
  const lonely = await instance(`redis://127.0.0.1:${await closedPort()}`);
  for (let i = 0; i < 2; i++) {
    const answer = await post(lonely.url, rpc('eth_chainId', [], i));
    t.equal(answer.status, 200);
    t.equal(answer.headers[CACHE_HEADER], 'miss');
    t.same(answer.json, { jsonrpc: '2.0', id: i, result: await anvil.rpc('eth_chainId') });
  }
  t.equal(lonely.relay.count('eth_chainId'), 2);
});
