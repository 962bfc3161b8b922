import t from 'tap';
import { startLiteSvmInstance } from '@tollgate/devnet';
import { Tokens, keyIdOf } from '../core/plugin-api.js';
import { type CreditLedger } from '../core/store-api.js';
import { httpTransport } from '../plugins/http/index.js';
import { solanaFamily } from '../plugins/solana/index.js';
import { wsTransport } from '../plugins/ws/index.js';
import { startTestGateway } from './helpers/gateway.js';
import { post, rpc } from './helpers/json-rpc.js';
import { openWs, wsCall as call } from './helpers/ws-client.js';

// Every way a Solana subscribe is refused gets a stable code and a message that says why, uncharged:
// web3.js 1.x resubscribes after each refusal, so a refusal must be one a person reading it can act on.
const KEY = 'sol-refusals-key-0001';
const node = await startLiteSvmInstance('litesvm#refusals');
t.teardown(() => node.stop());
const gw = await startTestGateway({
  plans: { metered: { dailyCredits: 1_000_000, creditsPerSecond: 1_000_000, failover: false } },
  keys: [{ key: KEY, plan: 'metered' }],
  // An upstream without a wsUrl: no subscription can open on this network.
  networks: [{ name: 'solana', families: ['solana'], upstreams: [{ name: 'litesvm', url: node.url }] }],
}, [httpTransport(), wsTransport(), solanaFamily()]);
t.teardown(() => gw.close());
const ledger = gw.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);
const used = async (): Promise<number> => (await ledger.balance(keyIdOf(KEY), 1_000_000, new Date())).used;

const SIGNATURE = '5'.repeat(88);
const ADDRESS = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
const SUBSCRIBES: ReadonlyArray<[string, unknown[]]> = [
  ['accountSubscribe', [ADDRESS, { encoding: 'base64', commitment: 'confirmed' }]],
  ['blockSubscribe', ['all', { transactionDetails: 'signatures' }]],
  ['logsSubscribe', [{ mentions: [ADDRESS] }]],
  ['programSubscribe', [ADDRESS, { filters: [{ dataSize: 165 }] }]],
  ['rootSubscribe', []],
  ['signatureSubscribe', [SIGNATURE, { commitment: 'confirmed' }]],
  ['slotSubscribe', []],
  ['slotsUpdatesSubscribe', []],
  ['voteSubscribe', []],
];

t.test('over HTTP the subscriptions do not exist: they need a connection', async (t) => {
  for (const [method, params] of SUBSCRIBES) {
    const res = await post(gw.url('solana', KEY), rpc(method, params));
    t.match(res.json, { error: { code: -32601 } }, method);
  }
  t.match((await post(gw.url('solana', KEY), rpc('slotUnsubscribe', [1]))).json, { error: { code: -32601 } }, 'slotUnsubscribe');
  t.equal(await used(), 0, 'not charged');
});

t.test('bad params are refused before anything opens', async (t) => {
  const client = await openWs(`${gw.origin.replace('http', 'ws')}/solana/ws/v3/${KEY}`);
  t.teardown(() => client.close());
  const bad: ReadonlyArray<[string, unknown[]]> = [
    ['accountSubscribe', []],
    ['accountSubscribe', ['not-base58-0OIl']],
    ['accountSubscribe', [ADDRESS, { commitment: 'recent' }]],
    ['blockSubscribe', ['everything']],
    ['logsSubscribe', [{ mentions: [ADDRESS, ADDRESS] }]],
    ['programSubscribe', [ADDRESS, { filters: Array.from({ length: 5 }, () => ({ dataSize: 1 })) }]],
    ['signatureSubscribe', ['abc']],
    ['slotSubscribe', [1]],
    ['slotUnsubscribe', ['0x1']],
    ['rootUnsubscribe', []],
  ];
  for (const [method, params] of bad) t.equal((await call(client, method, params)).error?.code, -32602, `${method} ${JSON.stringify(params)}`);
  t.equal(await used(), 0, 'not charged');
});

t.test('a network without a WebSocket upstream says so (-32004), uncharged; an unknown id is invalid params, as on a node', async (t) => {
  const client = await openWs(`${gw.origin.replace('http', 'ws')}/solana/ws/v3/${KEY}`);
  t.teardown(() => client.close());
  for (const [method, params] of SUBSCRIBES) {
    const answer = await call(client, method, params);
    t.equal(answer.error?.code, -32004, method);
    t.match(answer.error?.message, /network "solana" has no upstream with a WebSocket URL \(wsUrl\), which subscriptions need/);
  }
  const unknown = await call(client, 'slotUnsubscribe', [42]);
  t.same(unknown.error, { code: -32602, message: 'Invalid subscription id.' }, 'an id the connection does not hold');
  t.equal(await used(), 0, 'refusals cost nothing');
});

t.test('a client that resubscribes at once after each refusal is closed with 4429 after 100 in a row', async (t) => {
  const client = await openWs(`${gw.origin.replace('http', 'ws')}/solana/ws/v3/${KEY}`);
  t.teardown(() => client.close());
  // What @solana/web3.js 1.x does against a refusal: the same subscribe again, at once, without end.
  for (let i = 0; i < 100; i++) client.send({ jsonrpc: '2.0', id: 5_000 + i, method: 'slotSubscribe', params: [] });
  t.equal(await client.closed, 4429, 'closed: a reconnecting client waits for its reconnection delay');
  const refused = (client.messages as Array<{ error?: { code: number } }>).filter((m) => m.error?.code === -32004).length;
  t.ok(refused <= 100, `${refused} refusals answered before the close`);
  t.equal(await used(), 0, 'refusals cost nothing');
});
