import t from 'tap';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { responseCache } from '../plugins/cache/index.js';
import { startTestGateway } from './helpers/gateway.js';
import { post, rpc } from './helpers/json-rpc.js';
import { startReplayUpstream } from './helpers/replay-upstream.js';
import type { RecordedExchange } from './helpers/fixtures.js';

// A node with recorded answers only (a replay node): it answers block 0x2a and the chain id, and refuses
// everything else, the gateway's own head lookups (`eth_getBlockByNumber ["latest", false]`,
// `eth_blockNumber`) included, with -32601. A client's answer must be its own request's, or a gateway
// error saying what the gateway could not do: never the node's refusal of the gateway's lookup.
const hash = (n: number): string => `0x${n.toString(16).padStart(64, '0')}`;
const BLOCK = { number: '0x2a', hash: hash(42), parentHash: hash(41), timestamp: '0x6553f100', gasLimit: '0x1c9c380', gasUsed: '0x0', transactions: [] };
const recorded = (method: string, params: unknown[], result: unknown): RecordedExchange => ({
  file: method,
  comment: '',
  request: { jsonrpc: '2.0', id: 1, method, params },
  response: { jsonrpc: '2.0', id: 1, result },
});
const node = await startReplayUpstream([recorded('eth_getBlockByNumber', ['0x2a', false], BLOCK), recorded('eth_chainId', [], '0x1')]);
t.teardown(() => node.close());

const KEY = 'own-answer-key-000001';
const cache = responseCache({ headIntervalMs: 3_600_000 });
const gw = await startTestGateway(
  { keys: [{ key: KEY, plan: 'custom' }], networks: [{ name: 'eth', families: ['evm'], upstreams: [{ name: 'replay', url: node.url }] }] },
  [httpTransport(), evmFamily(), cache],
);
t.teardown(() => gw.close());
const call = async (method: string, params: unknown[]): Promise<{ status: number; result?: unknown; error?: { code: number; message: string } }> => {
  const answer = await post(gw.url('eth', KEY), rpc(method, params));
  return { status: answer.status, ...(answer.json as object) };
};
const received = (method: string, params: unknown[]): number =>
  node.received.filter((r) => JSON.stringify([(r as { method: unknown }).method, (r as { params: unknown }).params]) === JSON.stringify([method, params])).length;

t.test('a call sent while the gateway cannot learn the head gets its own node answer', async (t) => {
  t.equal(await cache.cache.refreshHead('eth'), undefined, 'the gateway\'s own head lookup was refused by the node');
  t.ok(received('eth_getBlockByNumber', ['latest', false]) >= 1, 'it did ask the node for latest');
  for (let i = 1; i <= 5; i++) {
    const answer = await call('eth_getBlockByNumber', ['0x2a', false]);
    t.same(answer, { status: 200, jsonrpc: '2.0', id: 1, result: BLOCK }, `call ${i}: the recorded block, not the refusal of "latest"`);
    t.equal(received('eth_getBlockByNumber', ['0x2a', false]), i, `call ${i} reached the node`);
  }
  const own = await call('eth_getBlockByNumber', ['0x2b', false]);
  t.match(own, { status: 200, error: { code: -32601, message: 'no recording for this request' } }, 'a block the node refuses: the node\'s refusal of that very request');
  t.equal(received('eth_getBlockByNumber', ['0x2b', false]), 1, 'which the node was asked');
});

t.test('a call the gateway must learn the head for gets a gateway error naming the head lookup, not the node\'s refusal of it', async (t) => {
  const filter = await call('eth_newBlockFilter', []);
  t.equal(filter.status, 503, 'retryable');
  t.equal(filter.error?.code, -33506, 'HEAD_UNKNOWN');
  t.match(filter.error?.message, /could not learn the head of eth: eth_blockNumber.*no recording for this request/);
  t.notOk(received('eth_newBlockFilter', []), 'no node was asked for the filter in its place');
  t.equal((await call('eth_chainId', [])).result, '0x1', 'the network still serves what its node answers');
});
