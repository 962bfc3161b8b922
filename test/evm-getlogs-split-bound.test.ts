import t from 'tap';
import { Tokens } from '../core/plugin-api.js';
import { type CreditLedger } from '../core/store-api.js';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { startAnvil } from '@tollgate/devnet';
import { startTestGateway } from './helpers/gateway.js';
import { post, rpc, type RawAnswer } from './helpers/json-rpc.js';
import { startCountingRelay } from './helpers/counting-relay.js';
import { until } from './helpers/until.js';

// Split eth_getLogs calls of one key in flight at once are bounded per network (`callsPerKey`, default 2):
// each fans out to `concurrency` node queries, so without a bound one key holds the nodes for everyone.
// A relay in front of a real Anvil holds the node's queries, so calls stay in flight without timing.
const anvil = await startAnvil();
t.teardown(() => anvil.stop());
const accounts = await anvil.rpc<string[]>('eth_accounts');
// Init code that emits one log (LOG1, topic 0x…2a) and deploys nothing.
const TOPIC = `0x${'0'.repeat(62)}2a`;
for (let i = 0; i < 30; i++) {
  const hash = await anvil.rpc<string>('eth_sendTransaction', [{ from: accounts[0], data: `0x7f${TOPIC.slice(2)}60006000a100` }]);
  while ((await anvil.rpc('eth_getTransactionReceipt', [hash])) === null);
}
const head = `0x${Number(await anvil.rpc<string>('eth_blockNumber')).toString(16)}`;
const FILTER = { fromBlock: '0x0', toBlock: head, topics: [TOPIC] };
const everything = await anvil.rpc<unknown[]>('eth_getLogs', [FILTER]);
t.equal(everything.length, 30, 'the node holds 30 logs');

const relay = await startCountingRelay(anvil.url);
t.teardown(() => relay.close());
const A = 'getlogs-bound-key-aaaa';
const B = 'getlogs-bound-key-bbbb';
const gw = await startTestGateway(
  {
    keys: [{ key: A, id: 'a', plan: 'custom' }, { key: B, id: 'b', plan: 'custom' }],
    networks: [{ name: 'logs', families: ['evm'], upstreams: [{ url: relay.url }], options: { getLogs: { split: true, maxBlockRange: 5, concurrency: 2 } } }],
  },
  [httpTransport(), evmFamily()],
);
t.teardown(() => gw.close());
const ledger = gw.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);
const used = async (id: string): Promise<number> => (await ledger.balance(id, 1e9, new Date())).used;
const getLogs = (key: string, id: number): Promise<RawAnswer> => post(gw.url('logs', key), rpc('eth_getLogs', [FILTER], id));

t.test('five split calls of one key at once: two in flight at the node, three refused uncharged; another key is not affected', async (t) => {
  relay.hold();
  t.teardown(() => relay.release());
  const answers: Array<RawAnswer | undefined> = [];
  const calls = [1, 2, 3, 4, 5].map((id, i) => getLogs(A, id).then((answer) => (answers[i] = answer)));
  const refused = (): RawAnswer[] => answers.filter((a): a is RawAnswer => a !== undefined && a.status === 429);
  await until('three of the five calls are refused', () => refused().length === 3, 10_000);
  await until('the two admitted calls have their parts at the node', () => relay.held === 4, 10_000);
  t.equal(relay.count('eth_getLogs'), 4, 'two calls of two parts each in flight at the node, no more');
  for (const answer of refused()) {
    t.match(answer.json, {
      jsonrpc: '2.0',
      error: { code: -33201, message: 'too many split eth_getLogs calls in flight: this key runs at most 2 at once on logs; wait for one to end or narrow the range', data: { callsPerKey: 2, retryAfterSeconds: 1 } },
    });
    t.equal(answer.headers['retry-after'], '1');
  }

  const other = getLogs(B, 6);
  await until('the other key\'s call has its parts at the node', () => relay.held === 6, 10_000);
  relay.release();
  const served = (await Promise.all(calls)).filter((a) => a.status === 200);
  t.equal(served.length, 2);
  for (const answer of served) t.same((answer.json as { result: unknown }).result, everything, 'an admitted call gets every log');
  t.same(((await other).json as { result: unknown }).result, everything, 'the other key was served while the first held its two slots');
  t.equal(await used('a'), 2 * 255, 'the two answered calls are charged; the three refusals are not');
  t.equal(await used('b'), 255);

  const again = await getLogs(A, 7);
  t.same((again.json as { result: unknown }).result, everything, 'the slots are free again once the calls ended');
});

t.test('a range of one part is not a split call and holds no slot', async (t) => {
  relay.hold();
  t.teardown(() => relay.release());
  const narrow = { fromBlock: '0x1', toBlock: '0x5', topics: [TOPIC] };
  const calls = [1, 2, 3].map((id) => post(gw.url('logs', A), rpc('eth_getLogs', [narrow], id)));
  await until('three one-part queries at the node', () => relay.held === 3, 10_000);
  relay.release();
  for (const answer of await Promise.all(calls)) t.equal((answer.json as { result: unknown[] }).result.length, 5);
});

t.test('callsPerKey is checked at start, naming the field', async (t) => {
  await t.rejects(
    startTestGateway({ networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: anvil.url }], options: { getLogs: { split: true, callsPerKey: 0 } } }] }, [httpTransport(), evmFamily()]),
    { name: 'ConfigError', message: /networks\[0\]\.options\.getLogs\.callsPerKey: must be >= 1/ },
  );
});
