import t from 'tap';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { startTestGateway } from './helpers/gateway.js';
import { post } from './helpers/json-rpc.js';
import { recordedExchanges, type RecordedExchange } from './helpers/fixtures.js';
import { startReplayUpstream } from './helpers/replay-upstream.js';
import { OPTIONAL_BLOCK_POSITION } from '../plugins/evm/default-block.js';

// The recorded execution-apis exchanges, `tests/` and `tests-pending/` alike, played through the gateway
// against a node that answers each recorded request with its recorded response: the gateway must hand
// the client that response, as hive's rpc-compat simulator compares it (ids aside; a `speconly` fixture
// only by its shape: a result where a result was recorded, an error where an error was).
const exchanges = [...recordedExchanges('tests'), ...recordedExchanges('tests-pending').map((e) => ({ ...e, file: `pending/${e.file}` }))];
const upstream = await startReplayUpstream(exchanges);
t.teardown(() => upstream.close());

const KEY = 'replay-test-key-0001';
const gw = await startTestGateway(
  // The replay node answers -32601 to any request it holds no recording for: that says nothing of the
  // method, so no method is banned on it (failover.methodBanMs 0).
  { keys: [{ key: KEY, plan: 'custom' }], networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url }], failover: { methodBanMs: 0 } }] },
  [httpTransport(), evmFamily()],
);
t.teardown(() => gw.close());

/**
 * Requests the gateway refuses itself, before any node sees them: its answer carries the node's code
 * and a message naming the parameter ("invalid argument 0 (filter): ..."), where the node's words differ.
 */
const refusedByGateway = new Map<string, string>([
  ['eth_getLogs/filter-error-invalid-blockHash-and-range.io', 'invalid argument 0 (filter): cannot specify both BlockHash and FromBlock/ToBlock, choose one or the other'],
  ['pending/eth_getStorageAt/get-storage-invalid-key-too-large.io', 'invalid argument 1 (slot): must be a storage slot (hex, at most 32 bytes)'],
  ['pending/eth_getStorageAt/get-storage-invalid-key.io', 'invalid argument 1 (slot): must be a storage slot (hex, at most 32 bytes)'],
]);

const methods = new Set(exchanges.map((e) => e.request.method));
t.ok(exchanges.length >= 170, `found ${exchanges.length} recorded exchanges of ${methods.size} methods`);
t.ok(methods.has('eth_simulateV1') && methods.has('eth_getStorageValues') && methods.has('eth_blobBaseFee'), 'the pending methods are replayed too');

/** hive's shape check of a `speconly` fixture: a result where one was recorded (of the same JSON type), an error where one was. */
function sameShape(answered: Record<string, unknown>, recorded: RecordedExchange['response']): boolean {
  if ('error' in recorded) return 'error' in answered && !('result' in answered);
  const kind = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
  return 'result' in answered && !('error' in answered) && kind(answered.result) === kind(recorded.result);
}

for (const exchange of exchanges) {
  t.test(exchange.file, async (t) => {
    const received = upstream.received.length;
    const res = await post(gw.url('eth', KEY), exchange.request);
    t.equal(res.status, 200);
    const refusal = refusedByGateway.get(exchange.file);
    if (refusal !== undefined) {
      const recorded = exchange.response.error as { code: number; message: string };
      const answered = (res.json as { error: { code: number; message: string } }).error;
      t.equal(answered.code, recorded.code, 'the node\'s code');
      t.equal(answered.message, refusal);
      t.equal(upstream.received.length, received, 'no node was asked');
      return;
    }
    if (exchange.specOnly === true) t.ok(sameShape(res.json as Record<string, unknown>, exchange.response), `same shape as recorded: ${exchange.comment}`);
    // The replay node answers with the recording, so even a speconly exchange must come back whole.
    t.same(res.json, exchange.response, exchange.comment);
    // A state read without its block parameter leaves with `latest` filled in (see default-block.ts).
    const params = exchange.request.params ?? [];
    const filled = OPTIONAL_BLOCK_POSITION[exchange.request.method] === params.length;
    if (filled) t.same(upstream.received.at(-1), { ...exchange.request, params: [...params, 'latest'] }, 'the node received the request with its block filled in');
    else t.same(upstream.received.at(-1), exchange.request, 'the node received the client\'s request unchanged');
  });
}
