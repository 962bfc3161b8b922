import t from 'tap';
import { step, Tokens, type RequestContext } from '../core/plugin-api.js';
import { type CreditLedger } from '../core/store-api.js';
import { type TollgatePlugin } from '../core/index.js';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { responseCache } from '../plugins/cache/index.js';
import { CACHE_HEADER } from '../plugins/cache/response-cache.js';
import { startAnvil } from '@tollgate/devnet';
import { startTestGateway } from './helpers/gateway.js';
import { startCountingRelay } from './helpers/counting-relay.js';
import { startChaosUpstream, until } from './helpers/failover-upstreams.js';
import { post, rpc } from './helpers/json-rpc.js';

// A client batch's misses reach the node as one JSON-RPC batch request: a real Anvil behind relays that
// count the HTTP requests reaching it, and a broken primary in front of one of them for failover.
const anvil = await startAnvil();
t.teardown(() => anvil.stop());
const relay = await startCountingRelay(anvil.url);
t.teardown(() => relay.close());
const partnerRelay = await startCountingRelay(anvil.url);
t.teardown(() => partnerRelay.close());
const broken = await startChaosUpstream(undefined, 'http-500');
t.teardown(() => broken.close());
// A node of its own that answers every request with one answer, a batch request too: it does not take batches.
const single = await startChaosUpstream(undefined, 'echo');
t.teardown(() => single.close());

// Keeps each call's context by its JSON-RPC id, so a test can cancel one call of a batch in flight.
const contexts = new Map<unknown, RequestContext>();
const capture: TollgatePlugin = {
  name: 'capture',
  register(container) {
    container.register(Tokens.Stage, { useValue: { name: 'capture', after: 'meter', create: () => step((ctx) => void contexts.set(ctx.call.id, ctx)) } });
  },
};

const KEY = 'cache-batch-key-00001';
const plugin = responseCache({ headIntervalMs: 3_600_000 });
const gw = await startTestGateway(
  {
    keys: [{ key: KEY, plan: 'custom', id: 'batch' }],
    networks: [
      { name: 'eth', families: ['evm'], upstreams: [{ url: relay.url }] },
      {
        name: 'eth-failover',
        families: ['evm'],
        upstreams: [{ name: 'broken', url: broken.url }, { name: 'partner', url: partnerRelay.url, role: 'partner' }],
        failover: { methods: ['eth_getBlockByNumber', 'eth_getBalance'] },
      },
      { name: 'eth-single', families: ['evm'], upstreams: [{ name: 'single', url: single.url }] },
    ],
    failover: { probe: { intervalMs: 3_600_000, timeoutMs: 1_000 } },
  },
  [httpTransport(), evmFamily(), plugin, capture],
);
t.teardown(() => gw.close());
const url = gw.url('eth', KEY);
const ledger = gw.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);
const used = async (): Promise<number> => (await ledger.balance('batch', 1e12, new Date())).used;

const accounts = await anvil.rpc<string[]>('eth_accounts');
for (let i = 0; i < 3; i++) await anvil.rpc('evm_mine');
await plugin.cache.refreshHead('eth');
await plugin.cache.refreshHead('eth-failover');

type Answer = { id: unknown; result?: unknown; error?: { code: number; message: string } };
const direct = async (call: Record<string, unknown>): Promise<unknown> => anvil.rpc(call.method as string, call.params as unknown[]);

t.test('a batch of cacheable misses reaches the node as one request; answers equal the node\'s', async (t) => {
  const calls = [
    rpc('eth_getBlockByNumber', ['0x1', false], 'a'),
    rpc('eth_getBlockByNumber', ['0x2', true], 7),
    rpc('eth_chainId', [], null as unknown as number),
    rpc('eth_getBalance', [accounts[0], '0x2'], 'd'),
    rpc('eth_getBlockTransactionCountByNumber', ['0x3'], 9),
  ];
  const before = relay.requests;
  const answer = await post(url, calls);
  t.equal(relay.requests, before + 1, 'five misses, one upstream request');
  t.equal(answer.headers[CACHE_HEADER], 'miss');
  const answers = answer.json as Answer[];
  t.same(answers.map((a) => a.id), calls.map((c) => c.id), 'each answer carries its client\'s id, in request order');
  for (const [i, call] of calls.entries()) t.same(answers[i]!.result, await direct(call), `${call.method as string} equals the node's`);
});

t.test('a mixed batch sends only its misses, in one request', async (t) => {
  const hits = [rpc('eth_getBlockByNumber', ['0x1', false], 1), rpc('eth_chainId', [], 2)];
  const misses = [rpc('eth_getBlockByNumber', ['0x3', false], 3), rpc('eth_getBalance', [accounts[1], '0x3'], 4), rpc('eth_getBlockByNumber', ['0x0', true], 5)];
  const batch = [misses[0]!, hits[0]!, misses[1]!, hits[1]!, misses[2]!];
  const before = relay.requests;
  const carried = relay.calls.length;
  const answer = await post(url, batch);
  t.equal(relay.requests, before + 1, 'one upstream request');
  t.same(relay.calls.slice(carried).map((c) => c.method).sort(), misses.map((c) => c.method as string).sort(), 'it carried the misses only');
  t.equal(answer.headers[CACHE_HEADER], 'miss, hit');
  const answers = answer.json as Answer[];
  t.same(answers.map((a) => a.id), [3, 1, 4, 2, 5]);
  for (const [i, call] of batch.entries()) t.same(answers[i]!.result, await direct(call), `${call.method as string} equals the node's`);
});

t.test('a batch whose upstream fails over still answers every entry', async (t) => {
  const calls = [rpc('eth_getBlockByNumber', ['0x1', true], 1), rpc('eth_getBlockByNumber', ['0x2', false], 2), rpc('eth_getBalance', [accounts[2], '0x1'], 3)];
  const failed = broken.received.length;
  const before = partnerRelay.requests;
  const answer = await post(gw.url('eth-failover', KEY), calls);
  t.equal(broken.received.length, failed + 1, 'the broken primary got the batch in one request, and answered HTTP 500');
  t.equal(partnerRelay.requests, before + 1, 'the partner got it in one request');
  const answers = answer.json as Answer[];
  t.same(answers.map((a) => a.id), [1, 2, 3]);
  for (const [i, call] of calls.entries()) t.same(answers[i]!.result, await direct(call), `${call.method as string} equals the node's`);
});

t.test('cancelling one call of a batch request in flight: the others still complete, only it is refunded', async (t) => {
  const calls = [rpc('eth_getBalance', [accounts[3], '0x1'], 'keep-1'), rpc('eth_getBalance', [accounts[4], '0x1'], 'drop'), rpc('eth_getBalance', [accounts[5], '0x1'], 'keep-2')];
  const before = await used();
  const requests = relay.requests;
  relay.hold();
  const answering = post(url, calls);
  await until('the batch request reached the relay', () => relay.held === 1);
  contexts.get('drop')!.cancel(new Error('cancelled by the test'));
  relay.release();
  const answer = await answering;
  t.equal(relay.requests, requests + 1, 'the three calls went in one request');
  const [first, dropped, last] = answer.json as Answer[];
  t.same(first!.result, await direct(calls[0]!));
  t.same(last!.result, await direct(calls[2]!));
  t.equal(dropped!.id, 'drop');
  t.ok(dropped!.error, 'the cancelled call answers with an error');
  t.equal(await used(), before + 2 * 80, 'the two answered calls are charged, the cancelled one refunded');
});

t.test('identical calls in one batch: one reaches the node, the other shares its answer, neither waits for the other', async (t) => {
  const call = rpc('eth_getBalance', [accounts[6], '0x2'], 'x');
  const before = relay.requests;
  const carried = relay.calls.length;
  const answer = await post(url, [call, { ...call, id: 'y' }, rpc('eth_getBalance', [accounts[7], '0x2'], 'z')]);
  const answers = answer.json as Answer[];
  t.same(answers.map((a) => a.id), ['x', 'y', 'z']);
  t.same(answers[0]!.result, await direct(call));
  t.same(answers[1]!.result, answers[0]!.result);
  t.same(answers[2]!.result, await anvil.rpc('eth_getBalance', [accounts[7], '0x2']));
  t.equal(relay.requests, before + 1, 'one upstream request');
  t.equal(relay.calls.length, carried + 2, 'carrying the shared call once and the other call');
});

t.test('an upstream that answers a batch request with a single answer gets the calls one by one', async (t) => {
  const calls = [rpc('eth_getBalance', [accounts[0], '0x1'], 1), rpc('eth_getBalance', [accounts[1], '0x1'], 2)];
  const seen = single.received.length;
  const first = await post(gw.url('eth-single', KEY), calls);
  t.same(first.json, [{ jsonrpc: '2.0', id: 1, result: '0x1' }, { jsonrpc: '2.0', id: 2, result: '0x1' }], 'each call answered with its own id');
  // The cache's and the selector's own head reads reach this node too: only the test's calls are compared.
  const mine = (from: number): string[] => single.received.slice(from).filter((m) => m === '?' || m === 'eth_getBalance');
  t.same(mine(seen), ['?', 'eth_getBalance', 'eth_getBalance'], 'the batch request, then each call on its own');
  const again = [rpc('eth_getBalance', [accounts[2], '0x1'], 3), rpc('eth_getBalance', [accounts[3], '0x1'], 4)];
  const next = single.received.length;
  const second = await post(gw.url('eth-single', KEY), again);
  t.same(second.json, [{ jsonrpc: '2.0', id: 3, result: '0x1' }, { jsonrpc: '2.0', id: 4, result: '0x1' }]);
  t.same(mine(next), ['eth_getBalance', 'eth_getBalance'], 'from then on, no batch request to it');
});
