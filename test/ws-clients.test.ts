import t from 'tap';
import { createPublicClient, webSocket, type Hex } from 'viem';
import { WebSocketProvider, Network, isCallException } from 'ethers';
import { startExampleGateway } from './helpers/example-gateway.js';
import { openWs } from './helpers/ws-client.js';
import { rpc } from './helpers/json-rpc.js';

// Real clients over the bundled gateway's WebSocket endpoints: viem, ethers and raw ws.
const gw = await startExampleGateway();
t.teardown(() => gw.close());
const seed = gw.devnet.getSeed('anvil');
const ws = (network: string): string => `${gw.origin.replace('http', 'ws')}/${network}/ws/v3/${gw.key}`;
const { ping, legacyTransfer } = seed.transactions;
const contract = seed.contract.address;
const hex = (n: number): Hex => `0x${n.toString(16)}`;

t.test('viem webSocket transport: every spec method', async (t) => {
  const transport = webSocket(ws('eth-devnet'), { retryCount: 0, reconnect: false, keepAlive: false });
  const client = createPublicClient({ transport });
  t.teardown(async () => { const { socket } = await client.transport.getRpcClient(); socket.close(); });
  const block = await client.getBlock({ blockNumber: BigInt(ping.blockNumber) });
  t.equal(block.hash, ping.blockHash, 'eth_getBlockByNumber');
  t.equal((await client.getTransaction({ hash: legacyTransfer.hash })).type, 'legacy', 'eth_getTransactionByHash');
  t.equal((await client.getTransaction({ blockNumber: BigInt(legacyTransfer.blockNumber), index: legacyTransfer.index })).hash, legacyTransfer.hash, 'eth_getTransactionByBlockNumberAndIndex');
  t.equal((await client.getTransactionReceipt({ hash: ping.hash })).logs.length, ping.logs, 'eth_getTransactionReceipt');
  t.equal((await client.getLogs({ address: contract, fromBlock: BigInt(seed.logs.fromBlock), toBlock: BigInt(seed.logs.toBlock) })).length, seed.logs.count, 'eth_getLogs');
  t.equal(BigInt((await client.call({ to: contract, data: seed.calls.succeed })).data!), 1n, 'eth_call');
  const revert = await client.call({ to: contract, data: seed.revert.call }).catch((e: Error) => e);
  t.match((revert as Error).message, seed.revert.reason, 'a revert over WebSocket');
  t.ok((await client.createAccessList({ account: seed.accounts[0]!, to: contract, data: seed.calls.pings })).accessList.length > 0, 'eth_createAccessList');
  t.equal(await client.request({ method: 'eth_getUncleByBlockNumberAndIndex' as never, params: ['latest', '0x0'] as never }), null);
  t.equal(await client.request({ method: 'eth_getUncleByBlockHashAndIndex' as never, params: [ping.blockHash, '0x0'] as never }), null);
  const polygon = createPublicClient({ transport: webSocket(ws('polygon-devnet'), { retryCount: 0, reconnect: false, keepAlive: false }) });
  t.teardown(async () => { const { socket } = await polygon.transport.getRpcClient(); socket.close(); });
  t.ok((await polygon.request({ method: 'bor_getCurrentValidators' as never, params: [] as never }) as unknown[]).length > 0, 'bor_getCurrentValidators');
});

t.test('ethers WebSocketProvider: every spec method', async (t) => {
  const network = Network.from(seed.chainId);
  const provider = new WebSocketProvider(ws('eth-devnet'), network, { staticNetwork: network });
  t.teardown(() => provider.destroy());
  t.equal((await provider.getBlock(ping.blockNumber))?.hash, ping.blockHash);
  t.equal((await provider.getTransaction(legacyTransfer.hash))?.type, 0);
  t.equal((await provider.getTransactionReceipt(ping.hash))?.logs.length, ping.logs);
  t.equal((await provider.getLogs({ address: contract, fromBlock: seed.logs.fromBlock, toBlock: seed.logs.toBlock })).length, seed.logs.count);
  t.equal(BigInt(await provider.call({ to: contract, data: seed.calls.succeed })), 1n);
  const error = await provider.call({ to: contract, data: seed.revert.call }).catch((e: unknown) => e);
  t.ok(isCallException(error));
  t.equal((error as { reason: string }).reason, seed.revert.reason);
  t.equal(((await provider.send('eth_getTransactionByBlockNumberAndIndex', [hex(legacyTransfer.blockNumber), hex(legacyTransfer.index)])) as { hash: string }).hash, legacyTransfer.hash);
  t.ok(((await provider.send('eth_createAccessList', [{ from: seed.accounts[0], to: contract, data: seed.calls.pings }, 'latest'])) as { accessList: unknown[] }).accessList.length > 0);
  t.equal(await provider.send('eth_getUncleByBlockNumberAndIndex', ['latest', '0x0']), null);
  t.equal(await provider.send('eth_getUncleByBlockHashAndIndex', [ping.blockHash, '0x0']), null);
  const polygon = new WebSocketProvider(ws('polygon-devnet'));
  t.teardown(() => polygon.destroy());
  t.ok(((await polygon.send('bor_getCurrentValidators', [])) as unknown[]).length > 0);
});

t.test('raw ws: every eth_ and bor_ method answers like HTTP', async (t) => {
  const eth = await openWs(ws('eth-devnet'));
  const polygon = await openWs(ws('polygon-devnet'));
  t.teardown(() => { eth.close(); polygon.close(); });
  const calls: Array<[string, unknown[]]> = [
    ['eth_getBlockByNumber', [hex(ping.blockNumber), false]],
    ['eth_getTransactionByBlockNumberAndIndex', [hex(ping.blockNumber), '0x0']],
    ['eth_getTransactionByHash', [ping.hash]],
    ['eth_getTransactionReceipt', [ping.hash]],
    ['eth_getLogs', [{ address: contract, fromBlock: hex(seed.logs.fromBlock), toBlock: hex(seed.logs.toBlock) }]],
    ['eth_call', [{ to: contract, data: seed.calls.pings }, 'latest']],
    ['eth_createAccessList', [{ to: contract, data: seed.calls.pings }, 'latest']],
    ['eth_getUncleByBlockNumberAndIndex', ['latest', '0x0']],
    ['eth_getUncleByBlockHashAndIndex', [ping.blockHash, '0x0']],
  ];
  calls.forEach(([method, params], i) => eth.send(rpc(method, params, i)));
  const answers = (await eth.waitFor(calls.length)) as Array<{ id: number; result?: unknown; error?: unknown }>;
  for (const answer of answers) {
    const [method] = calls[answer.id]!;
    t.notOk(answer.error, `${method} answered`);
    t.ok('result' in answer, method);
  }
  t.equal(((answers.find((a) => a.id === 0)!.result) as { hash: string }).hash, ping.blockHash);
  polygon.send(rpc('bor_getCurrentValidators', [], 'v'));
  const [validators] = (await polygon.waitFor(1)) as Array<{ id: string; result: unknown[] }>;
  t.equal(validators!.id, 'v');
  t.ok(validators!.result.length > 0);
});
