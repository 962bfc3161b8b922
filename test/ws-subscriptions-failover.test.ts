import t, { type Test } from 'tap';
import { SEED_CONTRACT, startAnvil, type AnvilInstance } from '@tollgate/devnet';
import { encodeFunctionData, type Abi, type Hex } from 'viem';
import { Tokens } from '../core/plugin-api.js';
import { evmFamily } from '../plugins/evm/index.js';
import { wsTransport, type WsTransport } from '../plugins/ws/index.js';
import { startTestGateway } from './helpers/gateway.js';
import { openWs } from './helpers/ws-client.js';

// Two Anvil nodes holding one chain: same genesis (fixed timestamp), every block mined on both with the
// same timestamp, so their hashes agree, as two nodes of one network do.
const GENESIS = 1_700_000_000;
const KEY = 'failover-subscriber-01';

type Notification = { params?: { subscription: string; result: { number: string; hash: string } } };

/** Two nodes of one chain behind a gateway, and a newHeads subscriber with the first three blocks. */
async function setup(t: Test) {
  const nodes = await Promise.all([0, 1].map(() => startAnvil({ noMining: true, args: ['--timestamp', String(GENESIS)] })));
  t.teardown(() => Promise.all(nodes.map((n) => { n.process.kill('SIGCONT'); return n.stop(); })));
  const gw = await startTestGateway({
    keys: [{ key: KEY, plan: 'core' }],
    failover: { maxLagBlocks: 2, probe: { intervalMs: 200, timeoutMs: 500 } },
    networks: [{ name: 'eth', families: ['evm'], upstreams: nodes.map((n, i) => ({ name: `node-${i}`, url: n.url, wsUrl: n.wsUrl })) }],
  }, [wsTransport({ subscriptions: { healthCheckMs: 100, upstreamPingMs: 300, upstreamTimeoutMs: 1_000 } }), evmFamily()]);
  t.teardown(() => gw.close());
  const service = (gw.gateway.container.resolveAll(Tokens.Transport).find((x) => x.name === 'ws') as WsTransport).subscriptions;
  let block = 0;
  /** Mines the next block, with the same timestamp, on each of `on`. */
  const mine = async (on: readonly AnvilInstance[]): Promise<void> => {
    block++;
    await Promise.all(on.map((n) => n.rpc('evm_mine', [GENESIS + block * 12])));
  };
  const client = await openWs(`${gw.origin.replace('http', 'ws')}/eth/ws/v3/${KEY}`);
  t.teardown(() => client.close());
  client.send({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] });
  await client.waitFor(1);
  for (let i = 0; i < 3; i++) await mine(nodes);
  await client.waitFor(4);
  const heads = (): Array<{ number: number; hash: string }> =>
    (client.messages as Notification[]).filter((m) => m.params !== undefined).map((m) => ({ number: Number.parseInt(m.params!.result.number, 16), hash: m.params!.result.hash }));
  const servingName = service.hubs()[0]!.upstream!.name;
  const serving = nodes[Number(servingName.slice(-1))]!;
  const other = nodes.find((n) => n !== serving)!;
  return { service, client, heads, mine, serving, servingName, other, nodes };
}

t.test('the serving node is killed mid-stream: every block number arrives once, in order, from the other node', async (t) => {
  const { service, client, heads, mine, serving, servingName, other } = await setup(t);
  t.equal(await serving.rpc('eth_getBlockByNumber', ['0x3', false]).then((b) => (b as { hash: string }).hash), await other.rpc('eth_getBlockByNumber', ['0x3', false]).then((b) => (b as { hash: string }).hash), 'the two nodes hold one chain');
  // The other node moves ahead (4, 5), then the serving node dies, then the chain goes on (6, 7).
  await mine([other]);
  await mine([other]);
  serving.process.kill('SIGKILL');
  await mine([other]);
  await mine([other]);
  await client.waitFor(8);
  t.same(heads().map((h) => h.number), [1, 2, 3, 4, 5, 6, 7], 'every block number once, in order');
  for (const head of heads().slice(3)) {
    const block = (await other.rpc('eth_getBlockByNumber', [`0x${head.number.toString(16)}`, false])) as { hash: string };
    t.equal(head.hash, block.hash, `block ${head.number} is the surviving node's`);
  }
  t.not(service.hubs()[0]!.upstream!.name, servingName, 'the stream moved to the other node');
});

t.test('the serving node hangs (stopped, its socket open): the stream moves on a missed ping, every block once, in order', async (t) => {
  const { service, client, heads, mine, serving, servingName, other } = await setup(t);
  await mine([other]);
  serving.process.kill('SIGSTOP');
  await mine([other]);
  await mine([other]);
  await client.waitFor(7);
  t.same(heads().map((h) => h.number), [1, 2, 3, 4, 5, 6], 'every block number once, in order');
  t.not(service.hubs()[0]!.upstream!.name, servingName, 'the stream moved to the other node');
});

t.test('logs: the stream moves after its node dies; missed logs come from history once, and a log of a replaced block comes back removed', async (t) => {
  const { service, client, mine, nodes } = await setup(t);
  const first = nodes[0]!;
  const account = ((await first.rpc('eth_accounts')) as string[])[0]!;
  // The same transactions on both nodes, mined with the same timestamps: the same contract, the same logs.
  const send = (on: readonly AnvilInstance[], tx: Record<string, unknown>): Promise<unknown[]> => Promise.all(on.map((n) => n.rpc('eth_sendTransaction', [{ from: account, gas: '0x200000', ...tx }])));
  await send(nodes, { data: SEED_CONTRACT.bytecode });
  await mine(nodes);
  const receipt = (await first.rpc('eth_getTransactionReceipt', [((await first.rpc('eth_getBlockByNumber', ['latest', false])) as { transactions: string[] }).transactions[0]])) as { contractAddress: string };
  const address = receipt.contractAddress;
  const ping = (count: number, tag: string): Record<string, unknown> => ({ to: address, data: encodeFunctionData({ abi: SEED_CONTRACT.abi as unknown as Abi, functionName: 'ping', args: [BigInt(count), `0x${Buffer.from(tag).toString('hex').padEnd(64, '0')}` as Hex] }) });
  client.send({ jsonrpc: '2.0', id: 2, method: 'eth_subscribe', params: ['logs', { address }] });
  const before = client.messages.length;
  await client.waitFor(before + 1);
  const id = (client.messages as Array<{ id?: number; result?: string }>).find((m) => m.id === 2)!.result!;
  // The logs stream may have opened on either node (calls rotate between nodes at the head).
  const servingName = service.hubs().find((h) => h.key.includes('|logs:'))!.upstream!.name;
  const serving = nodes[Number(servingName.slice(-1))]!;
  const other = nodes.find((n) => n !== serving)!;
  type Log = { blockNumber: string; blockHash: string; logIndex: string; removed: boolean };
  const logs = (): Log[] => (client.messages as Array<{ params?: { subscription: string; result: Log } }>).filter((m) => m.params?.subscription === id).map((m) => m.params!.result);
  // Block 5: one Ping on both nodes.
  await send(nodes, ping(1, 'both'));
  await mine(nodes);
  // Block 6: on the serving node, a Ping the other node never sees (the other's block 6 is empty).
  await send([serving], ping(1, 'lost'));
  await mine(nodes);
  await t.resolves(until(() => logs().length === 2), 'the two live logs');
  const lost = logs()[1]!;
  // Block 7 on the other node only: two Pings the serving node never sends; then the serving node dies.
  await send([other], ping(2, 'gap'));
  await mine([other]);
  serving.process.kill('SIGKILL');
  await t.resolves(until(() => logs().length === 5), 'the replaced log and the missed ones');
  const got = logs();
  t.same(got[2], { ...lost, removed: true }, 'the log of the replaced block 6 comes back with removed: true');
  t.same(got.slice(3).map((l) => [Number.parseInt(l.blockNumber, 16), Number.parseInt(l.logIndex, 16), l.removed]), [[7, 0, false], [7, 1, false]], 'the two logs of block 7, read from history, once each');
  await send([other], ping(1, 'live'));
  await mine([other]);
  await t.resolves(until(() => logs().length === 6), 'live logs go on from the other node');
  t.equal(Number.parseInt(logs()[5]!.blockNumber, 16), 8);
  t.equal(service.streams, 2, 'newHeads and logs streams, both moved');

  async function until(check: () => boolean): Promise<void> {
    while (!check()) await client.waitFor(client.messages.length + 1, 10_000);
  }
});

t.test('the serving node lags (alive, answering, more than maxLagBlocks behind): the stream moves, every block once, in order', async (t) => {
  const { service, client, heads, mine, servingName, other } = await setup(t);
  for (let i = 0; i < 4; i++) await mine([other]);
  await client.waitFor(8);
  t.same(heads().map((h) => h.number), [1, 2, 3, 4, 5, 6, 7], 'every block number once, in order');
  t.not(service.hubs()[0]!.upstream!.name, servingName, 'the stream moved to the node at the head');
});
