/**
 * While the gateway drains, new calls over HTTP are refused with 503 and -33503 (retry later), each
 * answered by its own id (a single request's, every request of a batch), and the call in flight is
 * still answered.
 */
import t from 'tap';
import { startAnvil } from '@tollgate/devnet';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { startTestGateway } from './helpers/gateway.js';
import { startGatedRelay } from './helpers/gated-relay.js';
import { post, rpc } from './helpers/json-rpc.js';
import { until } from './helpers/until.js';

const KEY = 'http-shutdown-key-0001';
const anvil = await startAnvil();
t.teardown(() => anvil.stop());
const relay = await startGatedRelay(anvil.url);
t.teardown(() => relay.close());
const gw = await startTestGateway(
  { server: { drainTimeoutMs: 60_000 }, keys: [{ key: KEY, plan: 'growth' }], networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: relay.url }] }] },
  [httpTransport(), evmFamily()],
);
const url = gw.url('eth', KEY);

t.test('a call during the drain is refused by its id, and the call in flight is answered', async (t) => {
  t.equal((await post(url, rpc('eth_chainId', []))).status, 200, 'the node answers through the relay');
  relay.gate();
  const inFlight = post(url, rpc('eth_blockNumber', [], 'held'));
  await until('the call is held at the relay', () => relay.holding() > 0);
  const closing = gw.close();

  const single = await post(url, rpc('eth_chainId', [], 7));
  t.equal(single.status, 503);
  t.equal(single.headers['retry-after'], '1');
  t.match(single.json, { jsonrpc: '2.0', id: 7, error: { code: -33503, message: /shutting down/ } }, 'the refusal carries the request\'s id');

  const batch = await post(url, [rpc('eth_chainId', [], 'a'), { jsonrpc: '2.0', method: 'eth_chainId', params: [] }, rpc('eth_chainId', [], 2)]);
  t.equal(batch.status, 503);
  t.match(batch.json, [{ id: 'a', error: { code: -33503 } }, { id: 2, error: { code: -33503 } }], 'a batch gets one refusal per request with an id');
  t.equal((batch.json as unknown[]).length, 2, 'none for the notification');

  const garbled = await post(url, '{"jsonrpc":');
  t.equal(garbled.status, 503);
  t.match(garbled.json, { id: null, error: { code: -33503 } }, 'a body that is not JSON-RPC gets id null');

  relay.open();
  const answered = await inFlight;
  t.equal(answered.status, 200);
  t.match(answered.json, { id: 'held', result: /^0x/ }, 'the call in flight was answered');
  await closing;
});
