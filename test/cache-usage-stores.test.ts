import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { Tokens } from '../core/plugin-api.js';
import { type TollgatePlugin } from '../core/index.js';
import { type UsageRecorder, type UsageTotals } from '../core/store-api.js';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { responseCache } from '../plugins/cache/index.js';
import { CACHE_HEADER } from '../plugins/cache/response-cache.js';
import { ledgerSqlite } from '../plugins/ledger-sqlite/index.js';
import { ledgerRedis } from '../plugins/ledger-redis/index.js';
import { admin } from '../plugins/admin/index.js';
import { startAnvil } from '@tollgate/devnet';
import { startTestGateway } from './helpers/gateway.js';
import { post, rpc } from './helpers/json-rpc.js';
import { until } from './helpers/failover-upstreams.js';
import { redisAvailable, startRedisServer } from './helpers/redis-server.js';

// Usage counts the response cache's hits and misses in every store, as the memory recorder does, and the
// admin API shows them: the same calls against a real Anvil through the memory, SQLite and Redis stores.
const anvil = await startAnvil();
t.teardown(() => anvil.stop());
const dir = await mkdtemp(join(tmpdir(), 'tollgate-cache-usage-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
if (!(await redisAvailable())) t.fail('redis-server is not installed (apt-get install redis-server)');
const redis = await startRedisServer();
t.teardown(() => redis.stop());

const TOKEN = 'admin-token-for-cache-usage-0123';
const KEY = 'cache-usage-key-000001';
const stores: Record<string, () => TollgatePlugin[]> = {
  memory: () => [],
  sqlite: () => [ledgerSqlite({ path: join(dir, 'usage.db') })],
  redis: () => [ledgerRedis({ url: redis.url, prefix: 'cache-usage:', usageFlushMs: 20 })],
};

const expected: Record<string, UsageTotals> = {
  eth_getBlockByNumber: { calls: 3, credits: 3 * 80, bytes: 0, failed: 0, cacheHits: 2, cacheMisses: 1 },
  eth_chainId: { calls: 2, credits: 0, bytes: 0, failed: 0, cacheHits: 1, cacheMisses: 1 },
  eth_sendRawTransaction: { calls: 1, credits: 0, bytes: 0, failed: 0 },
};
/** What the test compares: calls and the cache's counts (a write has none: the cache never considers it). */
const counts = (totals: Record<string, UsageTotals>): Record<string, Pick<UsageTotals, 'calls' | 'cacheHits' | 'cacheMisses'>> =>
  Object.fromEntries(Object.entries(totals).map(([method, { calls, cacheHits, cacheMisses }]) => [method, { calls, ...(cacheHits === undefined ? {} : { cacheHits }), ...(cacheMisses === undefined ? {} : { cacheMisses }) }]));

for (const [name, plugins] of Object.entries(stores)) {
  t.test(`${name}: usage counts hits and misses, and the admin API shows them`, async (t) => {
    const cache = responseCache({ headIntervalMs: 3_600_000 });
    const gw = await startTestGateway(
      {
        keys: [{ key: KEY, plan: 'custom', id: `usage-${name}` }],
        networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: anvil.url }] }],
        plugins: { admin: { token: TOKEN } },
      },
      [...plugins(), admin(), httpTransport(), evmFamily(), cache],
    );
    t.teardown(() => gw.close());
    // Heads are read when the test says so: a read by height is cacheable once the head is known.
    await cache.cache.refreshHead('eth');
    const url = gw.url('eth', KEY);
    const block = rpc('eth_getBlockByNumber', ['0x0', false], 1);
    const chainId = rpc('eth_chainId', [], 2);
    t.equal((await post(url, block)).headers[CACHE_HEADER], 'miss');
    t.equal((await post(url, block)).headers[CACHE_HEADER], 'hit');
    t.equal((await post(url, chainId)).headers[CACHE_HEADER], 'miss');
    t.equal((await post(url, [chainId, block])).headers[CACHE_HEADER], 'hit', 'a batch of two hits');
    t.equal((await post(url, rpc('eth_sendRawTransaction', ['0x00'], 3))).headers[CACHE_HEADER], undefined, 'a write is not considered');

    const recorder = gw.gateway.container.resolve<UsageRecorder>(Tokens.UsageRecorder);
    const day = new Date().toISOString().slice(0, 10);
    const id = `usage-${name}`;
    let totals: Record<string, UsageTotals> = {};
    await until(`${name} wrote the usage`, async () => {
      totals = await recorder.usage!(id, day);
      return totals.eth_getBlockByNumber?.calls === 3 && totals.eth_chainId?.calls === 2 && totals.eth_sendRawTransaction?.calls === 1;
    });
    t.same(counts(totals), counts(expected), 'hits and misses per method, as the memory recorder counts them');

    const res = await request(`${gw.origin}/admin/v1/keys/${id}/usage`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const body = (await res.body.json()) as { days: Array<{ methods: Record<string, UsageTotals>; total: UsageTotals }> };
    t.equal(res.statusCode, 200);
    const today = body.days[0]!;
    t.same(counts(today.methods), counts(expected), 'the admin API shows them per method');
    t.same({ calls: today.total.calls, cacheHits: today.total.cacheHits, cacheMisses: today.total.cacheMisses }, { calls: 6, cacheHits: 3, cacheMisses: 2 }, 'and in the day\'s total');
  });
}
