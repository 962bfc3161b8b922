import t from 'tap';
import { Tokens } from '../core/plugin-api.js';
import { type CreditLedger, type UsageRecorder } from '../core/store-api.js';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { startAnvil } from '@tollgate/devnet';
import { startTestGateway } from './helpers/gateway.js';
import { post, rpc } from './helpers/json-rpc.js';
import { startRangeLimitedNode, type RangeLimitedNode, type RangeLimitedOptions } from './helpers/range-limited-node.js';

// eth_getLogs over 0..latest on nodes that refuse wide ranges as providers do (a proxy in front of a real
// Anvil): with splitting on, the gateway answers what the unlimited node answers, billed once.
const anvil = await startAnvil();
t.teardown(() => anvil.stop());
const accounts = await anvil.rpc<string[]>('eth_accounts');

// Init code that emits one log (LOG1, topic 0x…2a) and deploys nothing: PUSH32 topic, PUSH1 0, PUSH1 0, LOG1, STOP.
const TOPIC = `0x${'0'.repeat(62)}2a`;
const EMIT = `0x7f${TOPIC.slice(2)}60006000a100`;
for (let i = 0; i < 36; i++) {
  // Every third block holds a plain transfer and no log, so some parts come back empty.
  const tx = i % 3 === 2 ? { from: accounts[0], to: accounts[1], value: '0x1' } : { from: accounts[0], data: EMIT };
  const hash = await anvil.rpc<string>('eth_sendTransaction', [tx]);
  while ((await anvil.rpc('eth_getTransactionReceipt', [hash])) === null);
}
const everything = await anvil.rpc<Array<{ blockNumber: string; logIndex: string }>>('eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest' }]);
t.equal(everything.length, 24, 'the unlimited node holds 24 logs over 36 blocks');

/** Each major client's and provider's words for a range too wide (see range-too-wide.ts). */
const WORDINGS: Record<string, RangeLimitedOptions['error']> = {
  geth: { code: -32000, message: 'exceed maximum block range: 5' },
  erigon: { code: -32000, message: 'block range too large' },
  nethermind: { code: -32001, message: 'Too many blocks. Max block range is 5' },
  besu: { code: -32005, message: 'Requested range exceeds maximum RPC range limit' },
  alchemy: { code: -32602, message: 'Log response size exceeded. You can make eth_getLogs requests with up to a 5 block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response.' },
  infura: { code: -32005, message: 'query returned more than 10000 results. Try with this block range [0x1, 0x5].' },
  quicknode: { code: -32614, message: 'eth_getLogs is limited to a 5 range' },
};

const nodes = new Map<string, RangeLimitedNode>();
for (const [name, error] of Object.entries(WORDINGS)) nodes.set(name, await startRangeLimitedNode(anvil.url, { maxBlockRange: 5, error }));
const bounded = await startRangeLimitedNode(anvil.url, { maxBlockRange: 5, error: WORDINGS.geth!, delayMs: 30 });
const unsplit = await startRangeLimitedNode(anvil.url, { maxBlockRange: 5, error: WORDINGS.geth! });
t.teardown(async () => { for (const node of [...nodes.values(), bounded, unsplit]) await node.close(); });

const KEY = 'getlogs-split-key-0001';
const gw = await startTestGateway(
  {
    keys: [{ key: KEY, id: 'split', plan: 'custom' }],
    networks: [
      ...[...nodes].map(([name, node]) => ({ name, families: ['evm'], upstreams: [{ url: node.url }], options: { getLogs: { split: true } } })),
      { name: 'bounded', families: ['evm'], upstreams: [{ url: bounded.url }], options: { getLogs: { split: true, maxBlockRange: 5, concurrency: 2 } } },
      { name: 'unsplit', families: ['evm'], upstreams: [{ url: unsplit.url }] },
    ],
  },
  [httpTransport(), evmFamily()],
);
t.teardown(() => gw.close());
const ledger = gw.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);
const used = async (): Promise<number> => (await ledger.balance('split', 1e9, new Date())).used;

/** One eth_getLogs over 0..latest through the gateway: its answer and what it cost. */
async function getLogs(network: string, filter: Record<string, unknown> = { fromBlock: '0x0', toBlock: 'latest' }): Promise<{ json: Record<string, unknown>; cost: number }> {
  const before = await used();
  const res = await post(gw.url(network, KEY), rpc('eth_getLogs', [filter], 'logs-1'));
  return { json: res.json as Record<string, unknown>, cost: (await used()) - before };
}

t.test('off by default: the node\'s refusal is the answer, as without a gateway', async (t) => {
  const { json, cost } = await getLogs('unsplit');
  t.same(json, { jsonrpc: '2.0', id: 'logs-1', error: WORDINGS.geth });
  t.equal(cost, 255, 'a node\'s answer is charged like any answer');
});

for (const name of Object.keys(WORDINGS)) {
  t.test(`${name}'s "range too wide" splits the query: the same logs as the unlimited node, in order, billed once`, async (t) => {
    const node = nodes.get(name)!;
    const { json, cost } = await getLogs(name);
    t.same(json, { jsonrpc: '2.0', id: 'logs-1', result: everything });
    t.equal(cost, 255, 'billed once, at the method\'s price');
    t.ok(node.refused > 0, `the node refused ${node.refused} wide parts`);
    t.ok(node.served.every((r) => r.to - r.from + 1 <= 5), 'every part it served was within its limit');
  });
}

t.test('a learned width is reused: the next call asks no part the node refuses', async (t) => {
  const node = nodes.get('geth')!;
  const refused = node.refused;
  const { json } = await getLogs('geth', { fromBlock: '0x3', toBlock: '0x20', topics: [TOPIC] });
  t.same(json.result, everything.filter((log) => Number(log.blockNumber) >= 3 && Number(log.blockNumber) <= 0x20));
  t.equal(node.refused, refused, 'no new refusal');
});

t.test('maxBlockRange: parts of at most that many blocks, at most `concurrency` in flight, none refused', async (t) => {
  const { json, cost } = await getLogs('bounded');
  t.same(json.result, everything);
  t.equal(cost, 255);
  t.equal(bounded.refused, 0, 'the node refused nothing');
  const head = Number(await anvil.rpc('eth_blockNumber'));
  t.equal(bounded.served.length, Math.ceil((head + 1) / 5), 'one query per part of 5 blocks');
  t.ok(bounded.served.every((r) => r.to - r.from + 1 <= 5));
  t.equal(bounded.maxInFlight, 2, 'two parts in flight at once, never more');
});

t.test('a blockHash filter and a reversed range go to the node as they are', async (t) => {
  const hash = (await anvil.rpc<{ hash: string }>('eth_getBlockByNumber', ['0x1', false])).hash;
  const byHash = await getLogs('bounded', { blockHash: hash });
  t.same(byHash.json.result, await anvil.rpc('eth_getLogs', [{ blockHash: hash }]));
  const reversed = await getLogs('bounded', { fromBlock: '0x5', toBlock: '0x2' });
  t.same(reversed.json, { jsonrpc: '2.0', id: 'logs-1', result: await anvil.rpc('eth_getLogs', [{ fromBlock: '0x5', toBlock: '0x2' }]).catch((e: unknown) => e) }, 'the node\'s own answer');
});

t.test('the 10,000-result and 10-second limits are the whole call\'s: the limit error is the answer, charged once for the nodes\' work', async (t) => {
  const slow = await startRangeLimitedNode(anvil.url, { maxBlockRange: 5, error: WORDINGS.geth!, delayMs: 150 });
  t.teardown(() => slow.close());
  const limited = await startTestGateway(
    {
      keys: [{ key: KEY, id: 'limits', plan: 'custom' }],
      networks: [
        { name: 'few', families: ['evm'], upstreams: [{ url: nodes.get('geth')!.url }], options: { getLogs: { split: true, maxBlockRange: 5 } } },
        { name: 'slow', families: ['evm'], upstreams: [{ url: slow.url }], options: { getLogs: { split: true, maxBlockRange: 2, concurrency: 1 } } },
      ],
      plugins: { evm: { getLogsMaxResults: 10, getLogsTimeoutMs: 500 } },
    },
    [httpTransport(), evmFamily()],
  );
  t.teardown(() => limited.close());
  const spent = async (): Promise<number> => (await limited.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger).balance('limits', 1e9, new Date())).used;
  const many = await post(limited.url('few', KEY), rpc('eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest' }]));
  t.same(many.json, { jsonrpc: '2.0', id: 1, error: { code: -32005, message: 'query returned more than 10 results' } }, 'each part holds at most 4 logs: only the sum is over');
  t.equal(await spent(), 255, 'the result limit\'s answer is charged at eth_getLogs\'s price, once');
  const slowBefore = slow.served.length;
  const started = performance.now();
  const late = await post(limited.url('slow', KEY), rpc('eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest' }]));
  const elapsed = performance.now() - started;
  t.same(late.json, { jsonrpc: '2.0', id: 1, error: { code: -32005, message: 'query timeout exceeded' } });
  t.ok(elapsed < 1_500, `ended at the call's deadline, not after every part (${Math.round(elapsed)} ms for 19 parts of 150 ms)`);
  t.ok(slow.served.length > slowBefore, `the node ran ${slow.served.length - slowBefore} parts before the deadline`);
  t.equal(await spent(), 510, 'the time limit\'s answer is charged at eth_getLogs\'s price, once, as the result limit\'s');
  const usage = (await limited.gateway.container.resolve<UsageRecorder>(Tokens.UsageRecorder).usage!('limits', new Date().toISOString().slice(0, 10)))['eth_getLogs'];
  t.match(usage, { calls: 2, credits: 510 }, 'usage shows both answers and their charge');
});

t.test('a bad getLogs option stops the gateway from starting, naming the field', async (t) => {
  await t.rejects(
    startTestGateway({ networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: anvil.url }], options: { getLogs: { split: true, maxBlockRange: 0 } } }] }, [httpTransport(), evmFamily()]),
    { name: 'ConfigError', message: /networks\[0\]\.options\.getLogs\.maxBlockRange: must be >= 1/ },
  );
});
