import t from 'tap';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { startTestGateway } from './helpers/gateway.js';
import { post } from './helpers/json-rpc.js';
import { recordedExchanges } from './helpers/fixtures.js';
import { startReplayUpstream } from './helpers/replay-upstream.js';

// The recorded execution-apis exchanges, played through the gateway against a node that answers each
// recorded request with its recorded response: the gateway must hand the client exactly that response.
const exchanges = recordedExchanges();
const upstream = await startReplayUpstream(exchanges);
t.teardown(() => upstream.close());

const KEY = 'replay-test-key-0001';
const gw = await startTestGateway(
  { keys: [{ key: KEY, plan: 'custom' }], networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url }] }] },
  [httpTransport(), evmFamily()],
);
t.teardown(() => gw.close());

/**
 * Requests the gateway refuses itself, before any node sees them: its answer carries the node's code
 * and the node's message with the parameter's name added ("invalid argument 0 (filter): ...").
 */
const refusedByGateway = new Set(['eth_getLogs/filter-error-invalid-blockHash-and-range.io']);

t.ok(exchanges.length >= 25, `found ${exchanges.length} recorded exchanges`);

for (const exchange of exchanges) {
  t.test(exchange.file, async (t) => {
    const received = upstream.received.length;
    const res = await post(gw.url('eth', KEY), exchange.request);
    t.equal(res.status, 200);
    if (refusedByGateway.has(exchange.file)) {
      const recorded = exchange.response.error as { code: number; message: string };
      const answered = (res.json as { error: { code: number; message: string } }).error;
      t.equal(answered.code, recorded.code);
      t.equal(answered.message, recorded.message.replace(/^invalid argument (\d+):/, 'invalid argument $1 (filter):'));
      t.equal(upstream.received.length, received, 'no node was asked');
      return;
    }
    t.same(res.json, exchange.response, exchange.comment);
    t.same(upstream.received.at(-1), exchange.request, 'the node received the client\'s request unchanged');
  });
}
