import t from 'tap';
import { JsonRpcProvider, Network, isCallException, type Log } from 'ethers';
import { startExampleGateway } from './helpers/example-gateway.js';

// ethers v6 against the bundled gateway: at least one call of each method of the spec.
const gw = await startExampleGateway();
t.teardown(() => gw.close());
const seed = gw.devnet.getSeed('anvil');
const network = Network.from(seed.chainId);
const provider = new JsonRpcProvider(gw.url('eth-devnet', gw.key), network, { staticNetwork: network, batchMaxCount: 1 });
const polygon = new JsonRpcProvider(gw.url('polygon-devnet', gw.key), undefined, { batchMaxCount: 1 });
t.teardown(() => { provider.destroy(); polygon.destroy(); });
const { ping, legacyTransfer } = seed.transactions;

t.test('eth_getBlockByNumber', async (t) => {
  const block = await provider.getBlock(ping.blockNumber);
  t.equal(block?.hash, ping.blockHash);
  t.equal(block?.transactions.length, 2);
});

t.test('eth_getTransactionByHash, eth_getTransactionReceipt', async (t) => {
  const tx = await provider.getTransaction(legacyTransfer.hash);
  t.equal(tx?.type, 0);
  const receipt = await provider.getTransactionReceipt(ping.hash);
  t.equal(receipt?.status, 1);
  t.equal(receipt?.logs.length, ping.logs);
  t.equal(await provider.getTransaction(`0x${'ab'.repeat(32)}`), null, 'an unknown hash is null');
});

t.test('eth_getTransactionByBlockNumberAndIndex', async (t) => {
  const tx = await provider.send('eth_getTransactionByBlockNumberAndIndex', [`0x${legacyTransfer.blockNumber.toString(16)}`, `0x${legacyTransfer.index.toString(16)}`]) as { hash: string };
  t.equal(tx.hash, legacyTransfer.hash);
});

t.test('eth_getLogs', async (t) => {
  const logs: Log[] = await provider.getLogs({ address: seed.contract.address, fromBlock: seed.logs.fromBlock, toBlock: seed.logs.toBlock, topics: [seed.contract.artifact.pingTopic] });
  t.equal(logs.length, seed.logs.count);
});

t.test('eth_call and its revert', async (t) => {
  t.equal(BigInt(await provider.call({ to: seed.contract.address, data: seed.calls.succeed })), 1n);
  const error = await provider.call({ to: seed.contract.address, data: seed.revert.call }).catch((e: unknown) => e);
  t.ok(isCallException(error), 'ethers sees a CALL_EXCEPTION');
  t.equal((error as { reason: string }).reason, seed.revert.reason);
  t.equal((error as { data: string }).data, seed.revert.data);
});

t.test('eth_createAccessList and the uncle methods', async (t) => {
  const list = await provider.send('eth_createAccessList', [{ from: seed.accounts[0], to: seed.contract.address, data: seed.calls.pings }, 'latest']) as { accessList: unknown[]; gasUsed: string };
  t.ok(list.accessList.length > 0);
  t.match(list.gasUsed, /^0x[0-9a-f]+$/);
  t.equal(await provider.send('eth_getUncleByBlockNumberAndIndex', ['latest', '0x0']), null);
  t.equal(await provider.send('eth_getUncleByBlockHashAndIndex', [ping.blockHash, '0x0']), null);
});

t.test('the block parameter may be left out: the node reads it as latest', async (t) => {
  const [account] = seed.accounts;
  const contract = seed.contract.address;
  const pairs: Array<[string, unknown[]]> = [
    ['eth_getBalance', [account]],
    ['eth_getCode', [contract]],
    ['eth_getStorageAt', [contract, '0x0']],
    ['eth_getTransactionCount', [account]],
    ['eth_call', [{ to: contract, data: seed.calls.pings }]],
  ];
  for (const [method, params] of pairs) {
    t.same(await provider.send(method, params), await provider.send(method, [...params, 'latest']), `${method} without a block equals ${method} at latest`);
  }
  const list = await provider.send('eth_createAccessList', [{ from: account, to: contract, data: seed.calls.pings }]) as { accessList: unknown[] };
  t.ok(list.accessList.length > 0, 'eth_createAccessList without a block answers an access list');
});

t.test('bor_getCurrentValidators', async (t) => {
  const validators = await polygon.send('bor_getCurrentValidators', []) as Array<{ signer: string }>;
  t.ok(validators.length > 0);
  t.match(validators[0]!.signer, /^0x[0-9a-fA-F]{40}$/);
});
