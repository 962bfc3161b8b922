import t from 'tap';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { createPublicClient, custom, http, type Log } from 'viem';
import { Tokens } from '../core/plugin-api.js';
import { type CreditLedger } from '../core/store-api.js';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { ledgerRedis } from '../plugins/ledger-redis/index.js';
import { startAnvil, type AnvilInstance } from '@tollgate/devnet';
import { ManualClock, startTestGateway } from './helpers/gateway.js';
import { post, rpc } from './helpers/json-rpc.js';
import { startRedisServer } from './helpers/redis-server.js';

// The polling filters, served by the gateway with their state in the deployment's store: viem's filter
// actions over HTTP, through two instances sharing Redis, while the node behind them is replaced.

/** Init code that emits one log (LOG1 with `topic`) and deploys nothing. */
const emitCode = (topic: number): string => `0x7f${topic.toString(16).padStart(64, '0')}60006000a100`;

/** Sends a log-emitting transaction from the node's first dev account and waits for it to be mined. */
async function emit(node: AnvilInstance, topic: number): Promise<string> {
  const [from] = await node.rpc<string[]>('eth_accounts');
  const hash = await node.rpc<string>('eth_sendTransaction', [{ from, data: emitCode(topic) }]);
  while ((await node.rpc('eth_getTransactionReceipt', [hash])) === null);
  return hash;
}

/** An HTTP relay whose node can be swapped: the gateway's one upstream URL, in front of node A and then node B. */
async function startSwitchableRelay(target: string): Promise<{ url: string; target: string; close(): Promise<void> }> {
  const relay = { url: '', target, close: async () => {} };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      request(relay.target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) })
        .then(async (answer) => res.writeHead(answer.statusCode, { 'content-type': 'application/json' }).end(Buffer.from(await answer.body.arrayBuffer())))
        .catch(() => res.writeHead(502).end());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  relay.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  relay.close = () => new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); });
  return relay;
}

const KEY = 'filters-test-key-000001';
const OTHER = 'filters-test-key-000002';

t.test('viem createEventFilter + getFilterChanges through two instances, the node replaced mid-way: every log once', async (t) => {
  const redis = await startRedisServer();
  t.teardown(() => redis.stop());
  const nodeA = await startAnvil();
  t.teardown(() => nodeA.stop());
  const relay = await startSwitchableRelay(nodeA.url);
  t.teardown(() => relay.close());
  const instance = () => startTestGateway(
    { keys: [{ key: KEY, plan: 'custom', id: 'filters' }], networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: relay.url }] }] },
    [ledgerRedis({ url: redis.url, prefix: 'filters-test:' }), httpTransport(), evmFamily()],
  );
  const one = await instance();
  t.teardown(() => one.close());
  const two = await instance();
  t.teardown(() => two.close());

  // A load balancer's round robin: each call goes to the next instance.
  const urls = [one.url('eth', KEY), two.url('eth', KEY)];
  const served: string[] = [];
  let turn = 0;
  const client = createPublicClient({
    transport: custom({
      async request({ method, params }: { method: string; params?: unknown }) {
        const which = turn++ % 2;
        served.push(`${which === 0 ? 'one' : 'two'}:${method}`);
        const res = await post(urls[which]!, rpc(method, params as unknown[]));
        const body = res.json as { result?: unknown; error?: { code: number; message: string } };
        if (body.error !== undefined) throw Object.assign(new Error(body.error.message), { code: body.error.code });
        return body.result;
      },
    }),
  });

  const filter = await client.createEventFilter();
  const delivered: Log[] = [];
  const poll = async (): Promise<Log[]> => {
    const logs = (await client.getFilterChanges({ filter })) as Log[];
    delivered.push(...logs);
    return logs;
  };
  const emitted: string[] = [];
  for (let i = 1; i <= 3; i++) emitted.push(await emit(nodeA, i));
  t.equal((await poll()).length, 3, 'instance two delivers the logs made after instance one created the filter');
  t.same(await poll(), [], 'instance one has nothing more: delivery is shared');
  for (let i = 4; i <= 5; i++) emitted.push(await emit(nodeA, i));
  t.equal((await poll()).length, 2);

  // The node is replaced: B is loaded with A's chain (its blocks, logs and state), then A goes away.
  const nodeB = await startAnvil();
  t.teardown(() => nodeB.stop());
  t.equal(await nodeB.rpc('anvil_loadState', [await nodeA.rpc('anvil_dumpState')]), true);
  relay.target = nodeB.url;
  await nodeA.stop();
  for (let i = 6; i <= 8; i++) emitted.push(await emit(nodeB, i));
  t.equal((await poll()).length, 3, 'the new node\'s logs, none of the old ones again');
  t.same(await poll(), []);

  // Two polls at once, one per instance: the cursor's compare-and-set lets one of them deliver.
  for (let i = 9; i <= 10; i++) emitted.push(await emit(nodeB, i));
  const both = await Promise.all([poll(), poll()]);
  t.same(both.map((logs) => logs.length).sort(), [0, 2], 'one poll delivers both logs, the other none');

  t.same(delivered.map((log) => log.transactionHash).sort(), [...emitted].sort(), 'every log once: no gap, no duplicate');
  t.same(delivered.map((log) => Number(BigInt(log.topics[0]!))).sort((a, b) => a - b), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  t.ok(served.some((s) => s.startsWith('one:eth_getFilterChanges')) && served.some((s) => s.startsWith('two:eth_getFilterChanges')), 'both instances answered polls');
  t.equal(await client.uninstallFilter({ filter }), true);
  t.equal(await client.uninstallFilter({ filter }), false, 'gone for both instances');
});

t.test('block and pending-transaction filters, filter logs, expiry after 5 idle minutes, a bound per key, keys kept apart', async (t) => {
  const node = await startAnvil();
  t.teardown(() => node.stop());
  const clock = new ManualClock(Date.UTC(2026, 0, 5, 12));
  const gw = await startTestGateway(
    { keys: [{ key: KEY, plan: 'custom', id: 'filters' }, { key: OTHER, plan: 'custom', id: 'other' }], networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: node.url }] }], plugins: { evm: { filtersPerKey: 3 } } },
    [httpTransport(), evmFamily()],
    { clock },
  );
  t.teardown(() => gw.close());
  const client = createPublicClient({ transport: http(gw.url('eth', KEY), { retryCount: 0 }) });
  const call = async (method: string, params: unknown[], key = KEY): Promise<{ result?: unknown; error?: { code: number; message: string } }> =>
    (await post(gw.url('eth', key), rpc(method, params))).json as { result?: unknown; error?: { code: number; message: string } };

  const blocks = await client.createBlockFilter();
  const logs = await client.createEventFilter({ fromBlock: 0n });
  const hash = await emit(node, 42);
  const hashes = await client.getFilterChanges({ filter: blocks });
  t.same(hashes, [(await node.rpc<{ hash: string }>('eth_getBlockByNumber', ['latest', false])).hash], 'the new block\'s hash');
  const all = (await client.getFilterLogs({ filter: logs })) as Log[];
  t.same(all.map((l) => l.transactionHash), [hash], 'eth_getFilterLogs: the whole range of the filter');

  const pending = await call('eth_newPendingTransactionFilter', []);
  t.match(pending.result, /^0x[0-9a-f]{32}$/);
  t.same(await call('eth_newFilter', [{}]), { jsonrpc: '2.0', id: 1, error: { code: -32005, message: 'too many filters: a key holds at most 3; uninstall some (eth_uninstallFilter) or let them expire' } }, 'the fourth filter of the key is refused');
  const ledger = gw.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);
  const before = (await ledger.balance('other', 1e9, new Date(clock.now()))).used;
  t.same(await call('eth_getFilterChanges', [blocks.id], OTHER), { jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'filter not found' } }, 'another key does not see it');
  t.equal((await ledger.balance('other', 1e9, new Date(clock.now()))).used - before, 80, 'the node\'s answer for an unknown filter, charged as a node would be asked');

  clock.advance(299_000);
  t.same((await call('eth_getFilterChanges', [blocks.id])).result, [], 'polled within 5 minutes: alive, and its idle time starts again');
  clock.advance(299_000);
  t.same((await call('eth_getFilterChanges', [blocks.id])).result, []);
  clock.advance(300_001);
  t.same((await call('eth_getFilterChanges', [blocks.id])).error, { code: -32000, message: 'filter not found' }, 'idle for more than 5 minutes: expired');
  t.match((await call('eth_newFilter', [{}])).result, /^0x/, 'the expired filters no longer count against the bound');
});
