import t from 'tap';
import { Tokens } from '../core/plugin-api.js';
import { type CreditLedger, type UsageRecorder } from '../core/store-api.js';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { startAnvil } from '@tollgate/devnet';
import { startTestGateway } from './helpers/gateway.js';
import { startCountingRelay } from './helpers/counting-relay.js';
import { post, rpc } from './helpers/json-rpc.js';

// A forwarded call (a method no family defines, under `unknownMethods: forward`) that the node answers with
// -32601: the node answered, its answer reached the client, so it is charged at the forward price, as
// docs/configuration.md says of every forwarded answer. A real Anvil behind a counting relay.
const anvil = await startAnvil();
t.teardown(() => anvil.stop());
const relay = await startCountingRelay(anvil.url);
t.teardown(() => relay.close());
const KEY = 'forwarded-node-error-key-1';
const gw = await startTestGateway(
  {
    keys: [{ key: KEY, plan: 'custom', id: 'fwd' }],
    networks: [{ name: 'open', families: ['evm'], upstreams: [{ url: relay.url }], unknownMethods: { policy: 'forward', credits: 7 } }],
  },
  [httpTransport(), evmFamily()],
);
t.teardown(() => gw.close());
const ledger = gw.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);
const used = async (): Promise<number> => (await ledger.balance('fwd', 1e9, new Date())).used;
const today = (): string => new Date().toISOString().slice(0, 10);

t.test('the node\'s -32601 for a forwarded method is its answer: passed on unchanged and charged the forward price', async (t) => {
  const direct = await post(anvil.url, rpc('no_suchMethod', [], 9));
  const nodeSays = (direct.json as { error: { code: number; message: string } }).error;
  t.equal(nodeSays.code, -32601, 'Anvil lacks the method');

  const res = await post(gw.url('open', KEY), rpc('no_suchMethod', [], 9));
  t.equal(res.status, 200);
  t.same(res.json, { jsonrpc: '2.0', id: 9, error: nodeSays }, 'the node\'s own answer, in its words');
  t.equal(relay.count('no_suchMethod'), 1, 'the node was asked once');
  t.equal(await used(), 7, 'charged the forward price');
  const usage = (await gw.gateway.container.resolve<UsageRecorder>(Tokens.UsageRecorder).usage!('fwd', today()))['no_suchMethod'];
  t.match(usage, { calls: 1, credits: 7 }, 'usage records the charge');
});

t.test('while the node is skipped for the method, no node answers: -32601 in its words, not charged', async (t) => {
  const res = await post(gw.url('open', KEY), rpc('no_suchMethod', [], 10));
  t.equal((res.json as { error: { code: number } }).error.code, -32601);
  t.equal(relay.count('no_suchMethod'), 1, 'no node asked (the method ban of docs/upstreams.md)');
  t.equal(await used(), 7, 'nothing more charged');
});

t.test('a batch of forwarded calls the node does not serve: each answer charged once', async (t) => {
  const res = await post(gw.url('open', KEY), [rpc('no_otherMethod', [], 1), rpc('no_thirdMethod', [], 2)]);
  const answers = res.json as Array<{ id: number; error: { code: number } }>;
  t.same(answers.map((a) => [a.id, a.error.code]), [[1, -32601], [2, -32601]]);
  t.equal(await used(), 7 + 2 * 7);
});
