import t from 'tap';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { responseCache } from '../plugins/cache/index.js';
import { CACHE_HEADER } from '../plugins/cache/response-cache.js';
import { startTestGateway } from './helpers/gateway.js';
import { post } from './helpers/json-rpc.js';
import { recordedExchanges, type RecordedExchange } from './helpers/fixtures.js';
import { startReplayUpstream } from './helpers/replay-upstream.js';

// The recorded execution-apis exchanges played twice through a caching gateway: both passes must hand
// the client the recorded response, and the second pass must not reach the node for any answer the
// cache may keep (a result that is not null); errors and nulls go to the node each time.
const exchanges = recordedExchanges();

/** The recorded head and finalized blocks, as the cache's head reads ask for them (transactions as hashes). */
function headReads(): RecordedExchange[] {
  const asHashes = (tag: string): RecordedExchange => {
    const full = exchanges.find((e) => e.request.method === 'eth_getBlockByNumber' && JSON.stringify(e.request.params) === JSON.stringify([tag, true]))!;
    const block = full.response.result as { transactions: Array<{ hash: string }> };
    return {
      file: `head/${tag}`,
      comment: '',
      request: { jsonrpc: '2.0', id: 1, method: 'eth_getBlockByNumber', params: [tag, false] },
      response: { ...full.response, result: { ...block, transactions: block.transactions.map((tx) => tx.hash) } },
    };
  };
  return [asHashes('latest'), asHashes('finalized')];
}

const upstream = await startReplayUpstream([...exchanges, ...headReads()]);
t.teardown(() => upstream.close());

const KEY = 'replay-cache-key-0001';
const plugin = responseCache({ headIntervalMs: 3_600_000 });
const gw = await startTestGateway(
  { keys: [{ key: KEY, plan: 'custom' }], networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url }] }] },
  [httpTransport(), evmFamily(), plugin],
);
t.teardown(() => gw.close());
const head = await plugin.cache.refreshHead('eth');
t.ok(head !== undefined && head.number === head.finalized, 'the recorded chain is finalized up to its head');

/** Requests the gateway refuses itself (see replay.test.ts): no node is asked, on either pass. */
const refusedByGateway = new Set(['eth_getLogs/filter-error-invalid-blockHash-and-range.io']);
const sameRequest = (a: unknown, b: unknown): boolean => {
  const { id: _a, ...restA } = a as Record<string, unknown>;
  const { id: _b, ...restB } = b as Record<string, unknown>;
  return JSON.stringify(restA) === JSON.stringify(restB);
};

for (const exchange of exchanges) {
  t.test(exchange.file, async (t) => {
    const reached = (): number => upstream.received.filter((r) => sameRequest(r, exchange.request)).length;
    const first = await post(gw.url('eth', KEY), exchange.request);
    const second = await post(gw.url('eth', KEY), exchange.request);
    t.same(second.json, first.json, 'both passes answer the same');
    if (refusedByGateway.has(exchange.file)) {
      t.equal(reached(), 0, 'no node was asked');
      return;
    }
    t.same(first.json, exchange.response, exchange.comment);
    const keepable = exchange.response.result !== undefined && exchange.response.result !== null;
    t.equal(reached(), keepable ? 1 : 2, keepable ? 'one upstream call for both passes' : 'an error or null is asked again');
    // Not kept: a miss, or not even considered (a block above the head may still appear).
    if (keepable) t.equal(second.headers[CACHE_HEADER], 'hit');
    else t.not(second.headers[CACHE_HEADER], 'hit');
  });
}
