import t from 'tap';
import { Errors } from '../core/index.js';
import { Tokens } from '../core/plugin-api.js';
import { type CreditLedger } from '../core/store-api.js';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { EVM_DEBUG_METHODS } from '../plugins/evm/debug-methods.js';
import { EVM_STANDARD_METHODS } from '../plugins/evm/standard-methods.js';
import { startAnvil } from '@tollgate/devnet';
import { startTestGateway } from './helpers/gateway.js';
import { startCountingRelay } from './helpers/counting-relay.js';
import { post, rpc } from './helpers/json-rpc.js';

// The standard method set, the debug_ namespace and the unknown-method policy, through the gateway in
// front of a real Anvil, with a relay between them counting what reaches the node.
const anvil = await startAnvil();
t.teardown(() => anvil.stop());
const relay = await startCountingRelay(anvil.url);
t.teardown(() => relay.close());

const KEYS = { custom: 'method-set-key-custom-01', core: 'method-set-key-core-0001' };
const gw = await startTestGateway(
  {
    keys: [{ key: KEYS.custom, plan: 'custom', id: 'custom' }, { key: KEYS.core, plan: 'core', id: 'core' }],
    networks: [
      { name: 'eth', families: ['evm'], upstreams: [{ url: relay.url }] },
      { name: 'open', families: ['evm'], upstreams: [{ url: relay.url }], unknownMethods: { policy: 'forward', credits: 7 } },
    ],
    plugins: { evm: { debug: { enabled: true, plans: ['custom'] }, credits: { eth_blobBaseFee: 11, debug_traceCall: 1_234 } } },
  },
  [httpTransport(), evmFamily()],
);
t.teardown(() => gw.close());
const ledger = gw.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);
const used = async (id: string): Promise<number> => (await ledger.balance(id, 1e9, new Date())).used;
const accounts = await anvil.rpc<string[]>('eth_accounts');
const SLOT = `0x${'0'.repeat(64)}`;

/** Calls through the gateway and returns the answer with the credits the call cost. */
async function call(method: string, params: unknown[], key = KEYS.custom, network = 'eth'): Promise<{ json: Record<string, unknown>; status: number; cost: number }> {
  const id = key === KEYS.custom ? 'custom' : 'core';
  const before = await used(id);
  const res = await post(gw.url(network, key), rpc(method, params, 9));
  return { json: res.json as Record<string, unknown>, status: res.status, cost: (await used(id)) - before };
}

t.test('the new standard methods reach the node and answer as the node does, at their price', async (t) => {
  const price = (name: string): number => EVM_STANDARD_METHODS.find((m) => m.name === name)!.credits;
  const cases: Array<[string, unknown[], number]> = [
    ['eth_getProof', [accounts[0], [SLOT], 'latest'], price('eth_getProof')],
    ['eth_getStorageValues', [{ [accounts[0]!]: [SLOT] }, 'latest'], price('eth_getStorageValues')],
    ['eth_config', [], price('eth_config')],
    ['eth_blobBaseFee', [], 11],
    ['eth_fillTransaction', [{ from: accounts[0], to: accounts[1] }], price('eth_fillTransaction')],
    ['eth_simulateV1', [{ blockStateCalls: [{ calls: [{ from: accounts[0], to: accounts[1], value: '0x1' }] }] }, 'latest'], price('eth_simulateV1')],
  ];
  for (const [method, params, credits] of cases) {
    const direct = await anvil.rpc(method, params);
    const before = relay.count(method);
    const { json, cost } = await call(method, params);
    t.same(json.result, direct, `${method}: the node's answer`);
    t.equal(relay.count(method), before + 1, `${method}: reached the node once`);
    t.equal(cost, credits, `${method}: charged ${credits}`);
  }
});

t.test('signing methods are refused with the reason, before a node is asked or a credit charged', async (t) => {
  for (const method of ['eth_sign', 'eth_signTransaction', 'eth_sendTransaction', 'eth_accounts', 'eth_coinbase']) {
    const before = relay.count(method);
    const { json, cost } = await call(method, method === 'eth_sendTransaction' ? [{ from: accounts[0], to: accounts[1] }] : []);
    const error = json.error as { code: number; message: string };
    t.equal(error.code, Errors.METHOD_NOT_SUPPORTED.code, method);
    t.match(error.message, new RegExp(`^${method}: `), 'the message names the method');
    t.equal(relay.count(method), before, 'no node asked');
    t.equal(cost, 0, 'not charged');
  }
  const { json } = await call('eth_sendTransaction', [{}]);
  t.match((json.error as { message: string }).message, /eth_sendRawTransaction/, 'and says what to do instead');
});

t.test('debug_ tracing: priced on its own, for the plans that may use it', async (t) => {
  const hash = await anvil.rpc<string>('eth_sendTransaction', [{ from: accounts[0], to: accounts[1], value: '0x1' }]);
  while ((await anvil.rpc('eth_getTransactionReceipt', [hash])) === null);
  const traced = await call('debug_traceTransaction', [hash, { tracer: 'callTracer' }]);
  t.same(traced.json.result, await anvil.rpc('debug_traceTransaction', [hash, { tracer: 'callTracer' }]));
  t.equal(traced.cost, EVM_DEBUG_METHODS.find((m) => m.name === 'debug_traceTransaction')!.credits);
  const traceCall = await call('debug_traceCall', [{ from: accounts[0], to: accounts[1] }, 'latest', { tracer: 'callTracer' }]);
  t.equal((traceCall.json.result as { to: string }).to.toLowerCase(), accounts[1]!.toLowerCase());
  t.equal(traceCall.cost, 1_234, 'the operator\'s price');

  const before = relay.count('debug_traceTransaction');
  const refused = await call('debug_traceTransaction', [hash], KEYS.core);
  t.equal(refused.status, 403);
  t.equal((refused.json.error as { code: number }).code, Errors.FORBIDDEN.code);
  t.equal((refused.json.error as { message: string }).message, 'debug_traceTransaction is not available on the core plan (plans: custom)');
  t.equal(refused.cost, 0, 'not charged');
  t.equal(relay.count('debug_traceTransaction'), before, 'no node asked');
});

t.test('debug_ is off unless turned on', async (t) => {
  const plain = await startTestGateway({ keys: [{ key: KEYS.custom, plan: 'custom' }], networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: relay.url }] }] }, [httpTransport(), evmFamily()]);
  t.teardown(() => plain.close());
  const before = relay.count('debug_traceCall');
  const res = await post(plain.url('eth', KEYS.custom), rpc('debug_traceCall', [{ to: accounts[1] }, 'latest']));
  t.equal((res.json as { error: { code: number } }).error.code, -32601);
  t.equal(relay.count('debug_traceCall'), before);
});

t.test('methods no family defines: refused by default, forwarded at the set price where the network says so', async (t) => {
  const refused = await call('anvil_nodeInfo', []);
  t.same(refused.json.error, { code: -32601, message: 'the method anvil_nodeInfo does not exist/is not available' });
  t.equal(refused.cost, 0);
  t.equal(relay.count('anvil_nodeInfo'), 0, 'no node asked');

  const forwarded = await call('anvil_nodeInfo', [], KEYS.custom, 'open');
  t.same(forwarded.json.result, await anvil.rpc('anvil_nodeInfo', []), 'the node\'s answer');
  t.equal(forwarded.cost, 7, 'the policy\'s price');
  const nodeError = await call('no_suchMethod', [], KEYS.custom, 'open');
  t.equal((nodeError.json.error as { code: number }).code, -32601, 'the node\'s own answer to a method it lacks');
  t.equal(relay.count('no_suchMethod'), 1, 'which the node was asked');
  t.equal(nodeError.cost, 7, 'the node\'s -32601 to a forwarded call is its answer, charged the policy\'s price (docs/configuration.md)');
});

t.test('a price for a method the family does not define is a configuration error', async (t) => {
  await t.rejects(
    startTestGateway({ networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: relay.url }] }], plugins: { evm: { credits: { eth_getBalanse: 5 } } } }, [httpTransport(), evmFamily()]),
    { name: 'ConfigError', message: /\n {2}plugins\.evm\.credits\.eth_getBalanse: the evm family has no method eth_getBalanse$/ },
  );
});
