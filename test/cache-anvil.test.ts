import t from 'tap';
import { Tokens } from '../core/plugin-api.js';
import { type CreditLedger, type UsageRecorder } from '../core/store-api.js';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { responseCache } from '../plugins/cache/index.js';
import { CACHE_HEADER } from '../plugins/cache/response-cache.js';
import { metrics } from '../plugins/metrics/index.js';
import { startAnvil } from '@tollgate/devnet';
import { startTestGateway } from './helpers/gateway.js';
import { startCountingRelay } from './helpers/counting-relay.js';
import { post, rpc } from './helpers/json-rpc.js';

// The response cache in front of a real Anvil, with a relay between them counting what reaches the node.
const anvil = await startAnvil();
t.teardown(() => anvil.stop());
const relay = await startCountingRelay(anvil.url);
t.teardown(() => relay.close());

const KEY = 'cache-test-key-0001';
const CHEAP = 'cache-test-key-0002';
// Heads are read when the test says so (refreshHead), never on a timer that would race its counts.
const plugin = responseCache({ headIntervalMs: 3_600_000, planHitCreditFactor: { developer: 0 } });
const gw = await startTestGateway(
  {
    keys: [{ key: KEY, plan: 'custom', id: 'full' }, { key: CHEAP, plan: 'developer', id: 'cheap' }],
    networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: relay.url }] }],
  },
  [metrics({ defaultMetrics: false }), httpTransport(), evmFamily(), plugin],
);
t.teardown(() => gw.close());
const cache = plugin.cache;
const url = gw.url('eth', KEY);
const accounts = await anvil.rpc<string[]>('eth_accounts');

/** Sends a transfer from the first dev account straight to Anvil, returning its hash. */
const transfer = async (value = '0x1'): Promise<string> => {
  const hash = await anvil.rpc<string>('eth_sendTransaction', [{ from: accounts[0], to: accounts[1], value }]);
  // Anvil may answer before it mined the block: wait for the receipt, unless mining is off on purpose.
  if (await anvil.rpc<boolean>('anvil_getAutomine')) while ((await anvil.rpc('eth_getTransactionReceipt', [hash])) === null);
  return hash;
};

await transfer();
await transfer();
await cache.refreshHead('eth');

t.test('repeated reads of mined data reach the node once, with answers equal to the node\'s', async (t) => {
  const head = cache.headOf('eth')!;
  const block = `0x${head.number.toString(16)}`;
  const calls = [rpc('eth_getBlockByNumber', [block, true]), rpc('eth_chainId', []), rpc('eth_getBlockByNumber', ['0x0', true]), rpc('eth_getBalance', [accounts[1], block])];
  for (const call of calls) {
    const direct = await anvil.rpc((call as { method: string }).method, (call as { params: unknown[] }).params);
    const first = await post(url, { ...call, id: 7 });
    const second = await post(url, { ...call, id: 'second' });
    t.equal(first.headers[CACHE_HEADER], 'miss');
    t.equal(second.headers[CACHE_HEADER], 'hit');
    t.same(first.json, { jsonrpc: '2.0', id: 7, result: direct });
    t.same(second.json, { jsonrpc: '2.0', id: 'second', result: direct }, 'the hit carries the client\'s own id');
    t.equal(relay.count((call as { method: string }).method, (call as { params: unknown }).params), 1, `${(call as { method: string }).method} reached the node once`);
  }
});

t.test('a receipt is cached once mined, never while the transaction is pending', async (t) => {
  await anvil.rpc('evm_setAutomine', [false]);
  const hash = await transfer();
  const pending = [await post(url, rpc('eth_getTransactionReceipt', [hash])), await post(url, rpc('eth_getTransactionReceipt', [hash]))];
  for (const answer of pending) t.same(answer.json, { jsonrpc: '2.0', id: 1, result: null });
  t.equal(relay.count('eth_getTransactionReceipt', [hash]), 2, 'the null receipt was not cached');
  await anvil.rpc('evm_mine');
  await anvil.rpc('evm_setAutomine', [true]);
  await cache.refreshHead('eth');
  const mined = await post(url, rpc('eth_getTransactionReceipt', [hash]));
  const again = await post(url, rpc('eth_getTransactionReceipt', [hash]));
  t.equal((mined.json as { result: { transactionHash: string } }).result.transactionHash, hash);
  t.same(again.json, mined.json);
  t.equal(again.headers[CACHE_HEADER], 'hit');
  t.equal(relay.count('eth_getTransactionReceipt', [hash]), 3, 'the mined receipt reached the node once');
});

t.test('latest-relative reads are kept until the head moves', async (t) => {
  await cache.refreshHead('eth');
  const before = await post(url, rpc('eth_blockNumber', []));
  t.equal((await post(url, rpc('eth_blockNumber', []))).headers[CACHE_HEADER], 'hit');
  await transfer();
  await cache.refreshHead('eth');
  const after = await post(url, rpc('eth_blockNumber', []));
  t.equal(after.headers[CACHE_HEADER], 'miss', 'a new head is a new entry');
  t.equal(Number((after.json as { result: string }).result), Number((before.json as { result: string }).result) + 1);
  t.equal(relay.count('eth_blockNumber'), 2);
});

t.test('a reorg drops the unfinalized entries (evm_revert, then anvil_reorg)', async (t) => {
  const snapshot = await anvil.rpc<string>('evm_snapshot');
  await transfer();
  await cache.refreshHead('eth');
  const height = `0x${cache.headOf('eth')!.number.toString(16)}`;
  const old = await post(url, rpc('eth_getBlockByNumber', [height, false]));
  t.equal((await post(url, rpc('eth_getBlockByNumber', [height, false]))).headers[CACHE_HEADER], 'hit');
  await anvil.rpc('evm_revert', [snapshot]);
  // Another transaction, so the replacing block differs whatever its timestamp.
  await transfer('0x2');
  const reorgs = cache.counters.reorgs;
  await cache.refreshHead('eth');
  t.equal(cache.counters.reorgs, reorgs + 1, 'the reorg was seen');
  const replaced = await post(url, rpc('eth_getBlockByNumber', [height, false]));
  t.equal(replaced.headers[CACHE_HEADER], 'miss', 'the dropped entry is fetched again');
  t.not((replaced.json as { result: { hash: string } }).result.hash, (old.json as { result: { hash: string } }).result.hash);
  t.equal((replaced.json as { result: { hash: string } }).result.hash, ((await anvil.rpc('eth_getBlockByNumber', [height, false])) as { hash: string }).hash);

  t.equal((await post(url, rpc('eth_getBlockByNumber', [height, false]))).headers[CACHE_HEADER], 'hit');
  await anvil.rpc('anvil_reorg', [1, []]);
  await cache.refreshHead('eth');
  t.equal(cache.counters.reorgs, reorgs + 2, 'the reorg at the same height was seen');
  const reorganised = await post(url, rpc('eth_getBlockByNumber', [height, false]));
  t.equal(reorganised.headers[CACHE_HEADER], 'miss');
  t.equal((reorganised.json as { result: { hash: string } }).result.hash, ((await anvil.rpc('eth_getBlockByNumber', [height, false])) as { hash: string }).hash);
  t.equal((await post(url, rpc('eth_getBlockByNumber', ['0x0', true]))).headers[CACHE_HEADER], 'hit', 'the finalized genesis block stays');
});

t.test('100 identical concurrent calls make one upstream request, each answered with its own id', async (t) => {
  await transfer();
  await cache.refreshHead('eth');
  const params = [accounts[2], `0x${cache.headOf('eth')!.number.toString(16)}`];
  relay.hold();
  const answers = Promise.all(Array.from({ length: 100 }, (_, i) => post(url, rpc('eth_getTransactionCount', params, i))));
  while (relay.held < 1 || cache.waiting < 99) await new Promise((resolve) => setImmediate(resolve));
  relay.release();
  const done = await answers;
  t.equal(relay.count('eth_getTransactionCount', params), 1);
  const expected = await anvil.rpc('eth_getTransactionCount', params);
  done.forEach((answer, i) => t.same(answer.json, { jsonrpc: '2.0', id: i, result: expected }));
  t.equal(done.filter((a) => a.headers[CACHE_HEADER] === 'hit').length, 99);
});

t.test('a batch: each entry hits or misses, and the header names both', async (t) => {
  const cached = rpc('eth_getBlockByNumber', ['0x0', true], 1);
  const fresh = rpc('eth_getBlockByNumber', ['0x1', true], 2);
  const write = rpc('eth_sendRawTransaction', ['0x00'], 3);
  const answer = await post(url, [cached, fresh, write]);
  t.equal(answer.headers[CACHE_HEADER], 'hit, miss');
  const [a, b, c] = answer.json as Array<{ id: number; result?: unknown; error?: unknown }>;
  t.same([a!.id, b!.id, c!.id], [1, 2, 3]);
  t.same(a!.result, await anvil.rpc('eth_getBlockByNumber', ['0x0', true]));
  t.same(b!.result, await anvil.rpc('eth_getBlockByNumber', ['0x1', true]));
  t.ok(c!.error, 'the write went to the node and its error came back');
  t.equal(relay.count('eth_sendRawTransaction'), 1);
  t.equal((await post(url, [write])).headers[CACHE_HEADER], undefined, 'writes are never considered');
  t.equal(relay.count('eth_sendRawTransaction'), 2);
});

t.test('metering: a hit costs the method\'s credits by default, the plan\'s share where set; usage counts hits and misses', async (t) => {
  const ledger = gw.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);
  const usage = gw.gateway.container.resolve<UsageRecorder>(Tokens.UsageRecorder);
  const used = async (id: string): Promise<number> => (await ledger.balance(id, 1_000_000_000, new Date())).used;
  const call = rpc('eth_getBlockByNumber', ['0x1', false]);
  await post(url, call);
  const full = await used('full');
  t.equal((await post(url, call)).headers[CACHE_HEADER], 'hit');
  t.equal(await used('full'), full + 80, 'a hit costs the method\'s 80 credits');
  const cheap = await used('cheap');
  t.equal((await post(gw.url('eth', CHEAP), call)).headers[CACHE_HEADER], 'hit');
  t.equal(await used('cheap'), cheap, 'the developer plan\'s hits cost nothing');
  const totals = (await usage.usage!('cheap', new Date().toISOString().slice(0, 10)))['eth_getBlockByNumber']!;
  t.same({ calls: totals.calls, hits: totals.cacheHits, misses: totals.cacheMisses }, { calls: 1, hits: 1, misses: undefined });
  const mine = (await usage.usage!('full', new Date().toISOString().slice(0, 10)))['eth_getBlockByNumber']!;
  t.ok(mine.cacheHits! > 0 && mine.cacheMisses! > 0, 'hits and misses counted');
});

t.test('Prometheus: hits and misses per network and method, and their ratio', async (t) => {
  const text = await (await fetch(`${gw.origin}/metrics`)).text();
  const sample = (name: string, labels: string): number => Number(new RegExp(`^${name}\\{${labels}\\} (\\S+)$`, 'm').exec(text)?.[1]);
  const hits = sample('tollgate_cache_calls_total', 'network="eth",method="eth_chainId",result="hit"');
  const misses = sample('tollgate_cache_calls_total', 'network="eth",method="eth_chainId",result="miss"');
  t.same([hits, misses], [1, 1]);
  t.equal(sample('tollgate_cache_hit_ratio', 'network="eth",method="eth_chainId"'), 0.5);
  const blocks = { hits: sample('tollgate_cache_calls_total', 'network="eth",method="eth_getBlockByNumber",result="hit"'), misses: sample('tollgate_cache_calls_total', 'network="eth",method="eth_getBlockByNumber",result="miss"') };
  t.equal(sample('tollgate_cache_hit_ratio', 'network="eth",method="eth_getBlockByNumber"'), blocks.hits / (blocks.hits + blocks.misses));
  t.equal(text.includes('method="eth_sendRawTransaction",result='), false, 'writes are never counted as cache calls');
});
