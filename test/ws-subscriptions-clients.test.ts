import t from 'tap';
import { createPublicClient, encodeFunctionData, webSocket, type Abi, type Hex } from 'viem';
import { Contract, Network, WebSocketProvider } from 'ethers';
import { devnet } from '@tollgate/devnet';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { wsTransport, type WsTransport } from '../plugins/ws/index.js';
import { Tokens } from '../core/plugin-api.js';
import { startTestGateway } from './helpers/gateway.js';
import { until } from './helpers/until.js';

// viem and ethers subscribe through the gateway exactly as they would to a node, against Anvil mining blocks.
const KEY = 'library-subscriber-01';
const dev = devnet();
const gw = await startTestGateway({
  keys: [{ key: KEY, plan: 'growth' }],
  networks: [{ name: 'eth', families: ['evm'], upstreams: [{ embedded: 'anvil' }] }],
}, [httpTransport(), wsTransport(), evmFamily(), dev]);
t.teardown(() => gw.close());
const seed = dev.getSeed();
const anvil = dev.instance('anvil#default')!.anvil;
const url = `${gw.origin.replace('http', 'ws')}/eth/ws/v3/${KEY}`;
const abi = seed.contract.artifact.abi as unknown as Abi;
const address = seed.contract.address;
const tag = `0x${Buffer.from('tollgate-subscription').toString('hex').padEnd(64, '0')}` as Hex;
/** Sends `ping(count, tag)` from dev account 0 (Anvil mines it at once): `count` Ping logs. */
const ping = (count: number): Promise<unknown> =>
  anvil.rpc('eth_sendTransaction', [{ from: seed.accounts[0], to: address, data: encodeFunctionData({ abi, functionName: 'ping', args: [BigInt(count), tag] }) }]);
const mine = (): Promise<unknown> => anvil.rpc('evm_mine');

/** Collects values until `count` arrived. */
function collector<T>(count: number): { add: (value: T) => void; done: Promise<T[]> } {
  const values: T[] = [];
  let resolve: (v: T[]) => void = () => {};
  const done = new Promise<T[]>((r) => (resolve = r));
  return { add: (value) => { values.push(value); if (values.length === count) resolve(values); }, done };
}

t.test('viem watchBlockNumber, watchBlocks and watchContractEvent over the webSocket transport', async (t) => {
  const client = createPublicClient({ transport: webSocket(url, { retryCount: 0, reconnect: false, keepAlive: false }) });
  const start = await client.getBlockNumber();
  const subscribed = subscriptionsAfter(3);
  const numbers = collector<bigint>(3);
  const blocks = collector<bigint>(3);
  const events = collector<{ from: string; tag: Hex }>(4);
  const errors: Error[] = [];
  const unwatch = [
    client.watchBlockNumber({ onBlockNumber: (n) => numbers.add(n), onError: (e) => errors.push(e) }),
    client.watchBlocks({ onBlock: (b) => blocks.add(b.number!), onError: (e) => errors.push(e) }),
    client.watchContractEvent({ address, abi, eventName: 'Ping', onLogs: (logs) => { for (const log of logs) events.add((log as unknown as { args: { from: string; tag: Hex } }).args); }, onError: (e) => errors.push(e) }),
  ];
  t.teardown(async () => {
    for (const u of unwatch) u();
    const { socket } = await client.transport.getRpcClient();
    socket.close();
  });
  // viem sends eth_subscribe as each watcher starts: wait for the three answers before the chain moves.
  await subscribed();
  await ping(1);
  await ping(3);
  await mine();
  t.same(await numbers.done, [start + 1n, start + 2n, start + 3n], 'watchBlockNumber: each new block number');
  // watchBlocks fetches each head's block with a call of its own and reports them as the answers come,
  // and calls over one WebSocket are answered as each completes: the set is what is promised.
  t.same((await blocks.done).sort((a, b) => Number(a - b)), [start + 1n, start + 2n, start + 3n], 'watchBlocks: each new block once');
  const pings = await events.done;
  t.equal(pings.length, 4, 'watchContractEvent: every Ping log');
  t.ok(pings.every((p) => p.from.toLowerCase() === seed.accounts[0]!.toLowerCase() && p.tag === tag), 'decoded from the logs');
  t.same(errors, []);
});

t.test('ethers v6 WebSocketProvider: on("block") and a contract event listener', async (t) => {
  const network = Network.from(seed.chainId);
  const provider = new WebSocketProvider(url, network, { staticNetwork: network });
  t.teardown(() => provider.destroy());
  const start = await provider.getBlockNumber();
  const subscribed = subscriptionsAfter(2);
  const blocks = collector<number>(2);
  const events = collector<bigint>(2);
  await provider.on('block', (n: number) => blocks.add(n));
  const contract = new Contract(address, abi as never, provider);
  await contract.on('Ping', (_from: string, n: bigint) => events.add(n));
  await subscribed();
  await ping(2);
  await mine();
  t.same(await blocks.done, [start + 1, start + 2], 'every new block');
  t.equal((await events.done).length, 2, 'both Ping events');
});

const service = (gw.gateway.container.resolveAll(Tokens.Transport).find((x) => x.name === 'ws') as WsTransport).subscriptions;

/**
 * Returns a wait for the gateway to hold `count` more client subscriptions than now: the libraries
 * subscribe in the background, and the chain must not move before they have.
 */
function subscriptionsAfter(count: number): () => Promise<void> {
  // Members of the shared streams: a subscription joins one just before its answer is written.
  const members = (): number => service.hubs().reduce((n, hub) => n + hub.size, 0);
  const target = members() + count;
  return () => until(`${count} more subscriptions join the shared streams`, () => members() >= target, 10_000, 10);
}
