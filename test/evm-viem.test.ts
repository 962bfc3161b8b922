import t from 'tap';
import { createPublicClient, http, defineChain, type Hex, BaseError, ExecutionRevertedError, type PublicClient } from 'viem';
import { startExampleGateway } from './helpers/example-gateway.js';

// viem against the bundled gateway fronting the embedded chain: every method of the spec.
const gw = await startExampleGateway();
t.teardown(() => gw.close());
const seed = gw.devnet.getSeed('anvil');
const chain = defineChain({ id: seed.chainId, name: 'devnet', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [gw.url('eth-devnet', gw.key)] } } });
const client: PublicClient = createPublicClient({ chain, transport: http(gw.url('eth-devnet', gw.key), { retryCount: 0 }) });
const polygon = createPublicClient({ transport: http(gw.url('polygon-devnet', gw.key), { retryCount: 0 }) });
const contract = seed.contract.address;
const { ping, eip1559Transfer, legacyTransfer } = seed.transactions;

t.test('eth_getBlockByNumber', async (t) => {
  const latest = await client.getBlock({ blockTag: 'latest' });
  t.ok(latest.number >= BigInt(seed.latestBlock));
  const block = await client.getBlock({ blockNumber: BigInt(ping.blockNumber), includeTransactions: true });
  t.equal(block.hash, ping.blockHash);
  t.equal(block.transactions.length, 2);
  t.equal((block.transactions[0] as { hash: Hex }).hash, ping.hash);
  t.equal(await client.getBlock({ blockNumber: 10_000_000n }).catch((e: Error) => e.name), 'BlockNotFoundError', 'a missing block is null');
});

t.test('eth_getTransactionByHash and eth_getTransactionByBlockNumberAndIndex', async (t) => {
  const tx = await client.getTransaction({ hash: eip1559Transfer.hash });
  t.equal(tx.type, 'eip1559');
  t.equal(tx.from.toLowerCase(), eip1559Transfer.from.toLowerCase());
  const legacy = await client.getTransaction({ blockNumber: BigInt(legacyTransfer.blockNumber), index: legacyTransfer.index });
  t.equal(legacy.hash, legacyTransfer.hash);
  t.equal(legacy.type, 'legacy');
});

t.test('eth_getTransactionReceipt', async (t) => {
  const receipt = await client.getTransactionReceipt({ hash: ping.hash });
  t.equal(receipt.status, 'success');
  t.equal(receipt.logs.length, ping.logs);
  t.equal(receipt.to?.toLowerCase(), contract.toLowerCase());
});

t.test('eth_getLogs', async (t) => {
  const logs = await client.getLogs({ address: contract, fromBlock: BigInt(seed.logs.fromBlock), toBlock: BigInt(seed.logs.toBlock) });
  t.equal(logs.length, seed.logs.count);
  t.equal(logs[0]!.topics[0], seed.contract.artifact.pingTopic);
  const none = await client.getLogs({ address: contract, fromBlock: 1n, toBlock: 1n });
  t.same(none, [], 'an empty result is an answer');
});

t.test('eth_call, and a revert arrives as code 3 with its reason and data', async (t) => {
  const ok = await client.call({ to: contract, data: seed.calls.succeed });
  t.equal(BigInt(ok.data!), 1n);
  const error = await client.call({ to: contract, data: seed.revert.call }).catch((e: BaseError) => e);
  t.ok(error instanceof BaseError);
  t.ok((error as BaseError).walk((e) => e instanceof ExecutionRevertedError), 'viem recognises a revert');
  t.match((error as BaseError).message, `Execution reverted with reason: ${seed.revert.reason}`);
  const rpcError = (error as BaseError).walk((e) => (e as { code?: number }).code === 3) as { code: number; data: Hex } | null;
  t.equal(rpcError?.code, 3, 'the node\'s code 3 reached the client');
  t.equal(rpcError?.data, seed.revert.data, 'with the encoded revert payload');
});

t.test('eth_createAccessList', async (t) => {
  const result = await client.createAccessList({ account: seed.accounts[0]!, to: contract, data: seed.calls.pings });
  t.ok(result.accessList.some((entry) => entry.address.toLowerCase() === contract.toLowerCase()), 'the contract is in the access list');
  t.ok(result.gasUsed > 21000n);
});

t.test('eth_getUncleByBlockNumberAndIndex and eth_getUncleByBlockHashAndIndex answer null on a chain without uncles', async (t) => {
  t.equal(await client.request({ method: 'eth_getUncleByBlockNumberAndIndex' as never, params: ['latest', '0x0'] as never }), null);
  t.equal(await client.request({ method: 'eth_getUncleByBlockHashAndIndex' as never, params: [ping.blockHash, '0x0'] as never }), null);
  const refused = await client.request({ method: 'eth_getUncleByBlockNumberAndIndex' as never, params: ['safe', '0x0'] as never }).catch((e: { code: number }) => e);
  t.equal((refused as { code: number }).code, -32602, '"safe" is refused for this method');
});

t.test('bor_getCurrentValidators on the Polygon network', async (t) => {
  const validators = await polygon.request({ method: 'bor_getCurrentValidators' as never, params: [] as never }) as Array<{ ID: number; signer: string; power: number; accum: number }>;
  t.ok(validators.length > 0);
  for (const v of validators) {
    t.type(v.ID, 'number');
    t.match(v.signer, /^0x[0-9a-fA-F]{40}$/);
    t.type(v.power, 'number');
    t.type(v.accum, 'number');
  }
  const notOnEth = await client.request({ method: 'bor_getCurrentValidators' as never, params: [] as never }).catch((e: { code: number }) => e);
  t.equal((notOnEth as { code: number }).code, -32601, 'not offered on a network without the polygon family');
});

t.test('eth_getLogs refuses more than 5,000 addresses and topics with -32005', async (t) => {
  const address = Array.from({ length: 4_998 }, (_, i) => `0x${(i + 1).toString(16).padStart(40, '0')}` as Hex);
  const topics = [[seed.contract.artifact.pingTopic as Hex, seed.tags.ping]] as Hex[][];
  const fits = await client.request({ method: 'eth_getLogs', params: [{ address, topics: topics as never, fromBlock: '0x0', toBlock: 'latest' }] });
  t.same(fits, [], 'exactly 5,000 is allowed');
  const error = await client.request({ method: 'eth_getLogs', params: [{ address: [...address, contract], topics: topics as never, fromBlock: '0x0', toBlock: 'latest' }] }).catch((e: { code: number; details: string }) => e);
  t.equal((error as { code: number }).code, -32005);
  t.equal((error as { details: string }).details, "query has 5001 addresses and topics, more than the limit of 5000");
});

t.test('the gas of eth_call is capped at 10x the block gas limit', async (t) => {
  const limit = BigInt((await client.getBlock()).gasLimit);
  const given = async (gas: bigint): Promise<bigint> => BigInt((await client.call({ to: contract, data: seed.calls.gasLeft, gas })).data!);
  const under = await given(2n * limit);
  t.ok(under > 2n * limit - 100_000n && under <= 2n * limit, 'a gas value under the cap is passed on unchanged');
  const over = await given(20n * limit);
  t.ok(over <= 10n * limit, `20x the limit is lowered to at most 10x (${over} <= ${10n * limit})`);
  t.ok(over > 10n * limit - 100_000n, 'and to exactly the cap');
  const estimate = await client.estimateGas({ to: contract, data: seed.calls.succeed, gas: 20n * limit });
  t.ok(estimate > 21_000n && estimate < limit, 'eth_estimateGas with an over-cap gas still works');
});
