import t, { type Test } from 'tap';
import { Tokens } from '../core/plugin-api.js';
import { type CreditLedger } from '../core/store-api.js';
import { httpTransport } from '../plugins/http/index.js';
import { wsTransport } from '../plugins/ws/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { startAnvil } from '@tollgate/devnet';
import { startTestGateway } from './helpers/gateway.js';
import { startCountingRelay } from './helpers/counting-relay.js';
import { post, rpc } from './helpers/json-rpc.js';
import { openWs } from './helpers/ws-client.js';

// `unknownMethods: forward` in front of a real Anvil, with a relay between them counting what reaches the
// node: only the listed namespaces and methods pass; the node's administration namespaces never do.
const anvil = await startAnvil();
t.teardown(() => anvil.stop());
const relay = await startCountingRelay(anvil.url);
t.teardown(() => relay.close());

const KEY = 'forward-allowlist-key-001';
const PRICE = 7;
const gw = await startTestGateway(
  {
    keys: [{ key: KEY, plan: 'custom', id: 'client' }],
    networks: [{
      name: 'open',
      families: ['evm'],
      upstreams: [{ url: relay.url }],
      unknownMethods: { policy: 'forward', credits: PRICE, namespaces: ['eth', 'net', 'web3', 'trace'], methods: ['anvil_nodeInfo'] },
    }],
  },
  [httpTransport(), wsTransport(), evmFamily()],
);
t.teardown(() => gw.close());
const ledger = gw.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);
const used = async (): Promise<number> => (await ledger.balance('client', 1e9, new Date())).used;

const accounts = await anvil.rpc<string[]>('eth_accounts');
const [holder, target] = [accounts[0]!, accounts[1]!];
const stranger = '0x00000000000000000000000000000000000000aa';
const sent = await anvil.rpc<string>('eth_sendTransaction', [{ from: holder, to: target, value: '0x1' }]);

/** Admin methods a node would run for anyone who reaches it, each with params it accepts. */
const ADMIN_CALLS: ReadonlyArray<readonly [string, unknown[]]> = [
  ['anvil_setBalance', [target, '0x1234']],
  ['anvil_setCode', [stranger, '0x6000']],
  ['anvil_setNonce', [target, '0x99']],
  ['anvil_mine', ['0x2']],
  ['anvil_impersonateAccount', [target]],
  ['anvil_setRpcUrl', ['http://127.0.0.1:1']],
  ['Anvil_setBalance', [target, '0x1234']],
  ['hardhat_setBalance', [target, '0x1234']],
  ['evm_mine', []],
  ['evm_snapshot', []],
  ['debug_traceTransaction', [sent]],
  ['admin_nodeInfo', []],
  ['personal_listAccounts', []],
  ['miner_start', []],
  ['txpool_content', []],
  ['engine_exchangeCapabilities', [[]]],
  ['clique_getSigners', []],
  ['les_serverInfo', []],
  ['setBalance', [target, '0x1234']],
];

/** Names from the allowed namespaces (no family defines them) and the one admin method named one by one. */
const ALLOWED_CALLS: ReadonlyArray<readonly [string, unknown[]]> = [
  ['eth_getAccount', [holder, 'latest']],
  ['net_listening', []],
  ['web3_sha3', ['0x68656c6c6f']],
  ['anvil_nodeInfo', []],
];

/** The node state the admin calls would change. */
async function nodeState(): Promise<unknown[]> {
  return Promise.all([
    anvil.rpc('eth_blockNumber'),
    anvil.rpc('eth_getBalance', [target, 'latest']),
    anvil.rpc('eth_getTransactionCount', [target, 'latest']),
    anvil.rpc('eth_getCode', [stranger, 'latest']),
  ]);
}

const relayed = (names: ReadonlyArray<readonly [string, unknown[]]>): number => names.reduce((n, [method]) => n + relay.count(method), 0);
const notFound = (method: string): { code: number; message: string } => ({ code: -32601, message: `the method ${method} does not exist/is not available` });
const WS_URL = `${gw.origin.replace('http', 'ws')}/open/ws/v3/${KEY}`;

type Answer = { id: number; error?: unknown; result?: unknown };

/** Sends every admin call over `transport` and checks each got -32601, none reached the node or cost a credit, and the node's state held. */
async function refusedOver(t: Test, send: () => Promise<Answer[]>): Promise<void> {
  const state = await nodeState();
  const before = await used();
  const answers = await send();
  t.equal(answers.length, ADMIN_CALLS.length);
  for (const answer of answers) t.same(answer.error, notFound(ADMIN_CALLS[answer.id]![0]), ADMIN_CALLS[answer.id]![0]);
  t.equal(relayed(ADMIN_CALLS), 0, 'no admin call reached the node');
  t.equal(await used(), before, 'not charged');
  t.same(await nodeState(), state, 'block number, balance, nonce and code unchanged');
}

t.test('admin namespaces are refused with -32601 before any node is asked, uncharged: single calls over HTTP', (t) =>
  refusedOver(t, async () => {
    const answers: Answer[] = [];
    for (const [i, [method, params]] of ADMIN_CALLS.entries()) answers.push((await post(gw.url('open', KEY), rpc(method, params, i))).json as Answer);
    return answers;
  }));

t.test('in a batch', (t) => refusedOver(t, async () => (await post(gw.url('open', KEY), ADMIN_CALLS.map(([method, params], i) => rpc(method, params, i)))).json as Answer[]));

t.test('over WebSocket', (t) =>
  refusedOver(t, async () => {
    const ws = await openWs(WS_URL);
    t.teardown(() => ws.close());
    ADMIN_CALLS.forEach(([method, params], i) => ws.send(rpc(method, params, i)));
    return (await ws.waitFor(ADMIN_CALLS.length)) as Answer[];
  }));

t.test('listed namespaces and methods named one by one are forwarded at the policy\'s price', async (t) => {
  const direct = await Promise.all(ALLOWED_CALLS.map(([method, params]) => anvil.rpc(method, params)));
  const check = async (transport: string, answers: Answer[], relayedBefore: number, usedBefore: number): Promise<void> => {
    for (const answer of answers) t.same(answer.result, direct[answer.id], `${transport}: ${ALLOWED_CALLS[answer.id]![0]} answered by the node`);
    t.equal(relayed(ALLOWED_CALLS), relayedBefore + ALLOWED_CALLS.length, `${transport}: each reached the node once`);
    t.equal(await used(), usedBefore + PRICE * ALLOWED_CALLS.length, `${transport}: ${PRICE} credits each`);
  };

  let [relayedBefore, usedBefore] = [relayed(ALLOWED_CALLS), await used()];
  const singles: Answer[] = [];
  for (const [i, [method, params]] of ALLOWED_CALLS.entries()) singles.push((await post(gw.url('open', KEY), rpc(method, params, i))).json as Answer);
  await check('single', singles, relayedBefore, usedBefore);

  [relayedBefore, usedBefore] = [relayed(ALLOWED_CALLS), await used()];
  const batch = await post(gw.url('open', KEY), ALLOWED_CALLS.map(([method, params], i) => rpc(method, params, i)));
  await check('batch', batch.json as Answer[], relayedBefore, usedBefore);

  [relayedBefore, usedBefore] = [relayed(ALLOWED_CALLS), await used()];
  const ws = await openWs(WS_URL);
  t.teardown(() => ws.close());
  ALLOWED_CALLS.forEach(([method, params], i) => ws.send(rpc(method, params, i)));
  await check('ws', (await ws.waitFor(ALLOWED_CALLS.length)) as Answer[], relayedBefore, usedBefore);
});

t.test('eth_ methods that sign with the node\'s keys or send without a signature are refused by the family, whatever the policy', async (t) => {
  const balance = await anvil.rpc('eth_getBalance', [stranger, 'latest']);
  const before = await used();
  const typedData = JSON.stringify({ types: { EIP712Domain: [] }, primaryType: 'EIP712Domain', domain: {}, message: {} });
  const calls: Array<[string, unknown[]]> = [
    ['eth_signTypedData_v4', [holder, typedData]],
    ['eth_signTypedData_v3', [holder, typedData]],
    ['eth_signTypedData', [holder, typedData]],
    ['eth_sendUnsignedTransaction', [{ from: holder, to: stranger, value: '0x1' }]],
  ];
  for (const [method, params] of calls) {
    const res = await post(gw.url('open', KEY), rpc(method, params));
    const error = (res.json as { error: { code: number; message: string } }).error;
    t.equal(error.code, -32004, method);
    t.match(error.message, new RegExp(`^${method}: `));
    t.equal(relay.count(method), 0, `${method}: no node asked`);
  }
  t.equal(await used(), before, 'not charged');
  t.equal(await anvil.rpc('eth_getBalance', [stranger, 'latest']), balance, 'no funds moved');
});

t.test('a policy that would open an admin or switched-off namespace is a configuration error', async (t) => {
  const start = (unknownMethods: Record<string, unknown>, debug = false): Promise<unknown> =>
    startTestGateway(
      { networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: relay.url }], unknownMethods: { policy: 'forward', credits: PRICE, ...unknownMethods } }], plugins: { evm: { debug: { enabled: debug } } } },
      [httpTransport(), evmFamily()],
    );
  await t.rejects(start({ namespaces: ['eth', 'anvil'] }), {
    name: 'ConfigError',
    message: /\n {2}networks\[0\]\.unknownMethods\.namespaces\[1\]: anvil_ methods administer the node and are never forwarded by namespace: name each one in networks\[0\]\.unknownMethods\.methods$/,
  });
  await t.rejects(start({ namespaces: ['Debug'] }, true), { name: 'ConfigError', message: /namespaces\[0\]: Debug_ methods administer the node/ });
  await t.rejects(start({ methods: ['debug_traceTransaction'] }), {
    name: 'ConfigError',
    message: /\n {2}networks\[0\]\.unknownMethods\.methods\[0\]: the debug namespace is switched off on this network$/,
  });
  await t.rejects(start({}), { name: 'ConfigError', message: /networks\[0\]\.unknownMethods: policy forward lists nothing to forward: give namespaces \(eth, trace\) or methods/ });
  await t.rejects(start({ namespaces: ['eth_'] }), { name: 'ConfigError', message: /networks\[0\]\.unknownMethods\.namespaces\[0\]: must be a namespace without its "_" \(eth, trace\)/ });
});

t.test('with debug_ switched on, its family methods are served and other debug_ names still need naming', async (t) => {
  const traced = await startTestGateway(
    {
      keys: [{ key: KEY, plan: 'custom' }],
      networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: relay.url }], unknownMethods: { policy: 'forward', credits: PRICE, namespaces: ['eth'] } }],
      plugins: { evm: { debug: { enabled: true } } },
    },
    [httpTransport(), evmFamily()],
  );
  t.teardown(() => traced.close());
  const before = relay.count('debug_setHead');
  const res = await post(traced.url('eth', KEY), rpc('debug_setHead', ['0x0']));
  t.same((res.json as { error: unknown }).error, notFound('debug_setHead'));
  t.equal(relay.count('debug_setHead'), before, 'no node asked');
  const trace = await post(traced.url('eth', KEY), rpc('debug_traceTransaction', [sent]));
  t.ok((trace.json as { result?: unknown }).result !== undefined, 'the family\'s own debug_ method is served');
});

t.test('a reload that would open an admin namespace is refused whole, and the running policy stays', async (t) => {
  const network = { name: 'open', families: ['evm'], upstreams: [{ url: relay.url }] };
  await t.rejects(
    gw.gateway.reload({ keys: [{ key: KEY, plan: 'custom', id: 'client' }], networks: [{ ...network, unknownMethods: { policy: 'forward', credits: PRICE, namespaces: ['eth', 'evm'] } }] }),
    { name: 'ConfigError', message: /networks\[0\]\.unknownMethods\.namespaces\[1\]: evm_ methods administer the node/ },
  );
  const res = await post(gw.url('open', KEY), rpc('evm_mine', []));
  t.same((res.json as { error: unknown }).error, notFound('evm_mine'));
  t.equal(relay.count('evm_mine'), 0, 'no node asked');
});
