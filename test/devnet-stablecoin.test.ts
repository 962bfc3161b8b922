import 'reflect-metadata';
import t from 'tap';
import { createPublicClient, createWalletClient, hashDomain, http, parseSignature, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { NetworkConfig } from '../core/index.js';
import {
  DEVNET_PAYER_ADDRESS,
  DEVNET_PAYER_FUNDS,
  DEVNET_PAYER_KEY,
  MULTICALL3_ADDRESS,
  MULTICALL_CONTRACT,
  STABLECOIN_CONTRACT,
  devnet,
  seedDevnet,
  startAnvil,
  type DevnetInstance,
} from '@tollgate/devnet';

// The devnet's test stablecoin: USDC's EIP-3009 surface on Anvil, with a funded demo payer.

const abi = STABLECOIN_CONTRACT.abi as never;
const anvil = await startAnvil();
t.teardown(() => anvil.stop());
const seed = await seedDevnet(anvil.url, { stablecoin: true });
const coin = seed.stablecoin!;
const chain = { id: anvil.chainId, name: 'anvil', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [anvil.url] } } } as const;
const client = createPublicClient({ chain, transport: http(anvil.url) });
const read = <T>(functionName: string, args: readonly unknown[] = []): Promise<T> => client.readContract({ address: coin.address, abi, functionName, args } as never) as Promise<T>;

const TYPES = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' }, { name: 'to', type: 'address' }, { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' }, { name: 'validBefore', type: 'uint256' }, { name: 'nonce', type: 'bytes32' },
  ],
} as const;

/** An EIP-3009 authorization from `key` to `to`, signed over the coin's EIP-712 domain. */
async function authorize(key: Hex, to: Address, value: bigint, nonce: Hex, validBefore = 2n ** 48n) {
  const account = privateKeyToAccount(key);
  const message = { from: account.address, to, value, validAfter: 0n, validBefore, nonce };
  const signature = await account.signTypedData({
    domain: { name: coin.name, version: coin.version, chainId: anvil.chainId, verifyingContract: coin.address },
    types: TYPES, primaryType: 'TransferWithAuthorization', message,
  });
  const { v, r, s } = parseSignature(signature);
  return [message.from, to, value, 0n, validBefore, nonce, Number(v), r, s] as const;
}

t.test('the demo payer is the documented devnet key, funded with 1,000,000 tUSD and no ether', async (t) => {
  t.equal(privateKeyToAccount(DEVNET_PAYER_KEY).address, DEVNET_PAYER_ADDRESS);
  t.same(coin.payer, { address: DEVNET_PAYER_ADDRESS, privateKey: DEVNET_PAYER_KEY, balance: DEVNET_PAYER_FUNDS.toString() });
  t.equal(await read<bigint>('balanceOf', [DEVNET_PAYER_ADDRESS]), DEVNET_PAYER_FUNDS);
  t.equal(await read<bigint>('totalSupply'), DEVNET_PAYER_FUNDS);
  t.equal(await client.getBalance({ address: DEVNET_PAYER_ADDRESS }), 0n);
  t.equal(coin.minter, seed.accounts[0]);
});

t.test("USDC's metadata and EIP-712 domain: 6 decimals, a name and version 2", async (t) => {
  t.same([await read('name'), await read('symbol'), await read('version'), await read('decimals')], [coin.name, coin.symbol, '2', 6]);
  t.equal(coin.decimals, 6);
  t.equal(
    await read<Hex>('DOMAIN_SEPARATOR'),
    hashDomain({ domain: { name: coin.name, version: coin.version, chainId: BigInt(anvil.chainId), verifyingContract: coin.address }, types: { EIP712Domain: [
      { name: 'name', type: 'string' }, { name: 'version', type: 'string' }, { name: 'chainId', type: 'uint256' }, { name: 'verifyingContract', type: 'address' },
    ] } }),
  );
  t.equal(STABLECOIN_CONTRACT.selectors['transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)'], '0xe3ee160e', "USDC's selector");
  t.equal(STABLECOIN_CONTRACT.selectors['receiveWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)'], '0xef55bec6', "USDC's selector");
  t.equal(STABLECOIN_CONTRACT.selectors['authorizationState(address,bytes32)'], '0xe94a0102', "USDC's selector");
});

t.test('transferWithAuthorization moves exactly the value once; a replay, an expiry or another signer reverts with FiatTokenV2 reasons', async (t) => {
  const relayer = createWalletClient({ chain, transport: http(anvil.url), account: seed.accounts[1] });
  const to = seed.accounts[2] as Address;
  const nonce = `0x${'11'.repeat(32)}` as Hex;
  const args = await authorize(DEVNET_PAYER_KEY, to, 1_500_000n, nonce);
  const before = await read<bigint>('balanceOf', [to]);
  const hash = await relayer.writeContract({ address: coin.address, abi, functionName: 'transferWithAuthorization', args } as never);
  t.equal((await client.waitForTransactionReceipt({ hash })).status, 'success');
  t.equal(await read<bigint>('balanceOf', [to]) - before, 1_500_000n);
  t.equal(await read<bigint>('balanceOf', [DEVNET_PAYER_ADDRESS]), DEVNET_PAYER_FUNDS - 1_500_000n);
  t.equal(await read<boolean>('authorizationState', [DEVNET_PAYER_ADDRESS, nonce]), true);

  const simulate = (a: readonly unknown[]) => client.simulateContract({ address: coin.address, abi, functionName: 'transferWithAuthorization', args: a, account: seed.accounts[1] } as never);
  await t.rejects(simulate(args), /authorization is used or canceled/);
  await t.rejects(simulate(await authorize(DEVNET_PAYER_KEY, to, 1n, `0x${'12'.repeat(32)}`, 1n)), /authorization is expired/);
  const forged = await authorize(generatePrivateKey(), to, 1n, `0x${'13'.repeat(32)}`);
  await t.rejects(simulate([DEVNET_PAYER_ADDRESS, ...forged.slice(1)]), /invalid signature/);
  await t.rejects(simulate(await authorize(generatePrivateKey(), to, 1n, `0x${'14'.repeat(32)}`)), /transfer amount exceeds balance/);
});

t.test("Multicall3's tryAggregate answers at its canonical address", async (t) => {
  t.equal(coin.multicall, MULTICALL3_ADDRESS);
  const results = await client.readContract({
    address: MULTICALL3_ADDRESS, abi: MULTICALL_CONTRACT.abi as never, functionName: 'tryAggregate',
    args: [false, [{ target: coin.address, callData: `${STABLECOIN_CONTRACT.selectors['decimals()']}` }, { target: coin.address, callData: '0xdeadbeef' }]],
  } as never) as Array<{ success: boolean; returnData: Hex }>;
  t.same(results.map((r) => r.success), [true, false]);
  t.equal(BigInt(results[0]!.returnData), 6n);
});

t.test('a default seed has no stablecoin; the devnet setting stablecoin: true deploys it', async (t) => {
  const plain = await startAnvil();
  t.teardown(() => plain.stop());
  t.equal((await seedDevnet(plain.url)).stablecoin, undefined);
  const dev = devnet({ stablecoin: true });
  t.teardown(() => dev.stop());
  const network: NetworkConfig = { name: 'pay', families: ['evm'], upstreams: [], options: {} } as unknown as NetworkConfig;
  const instance = await dev.providers.find((p) => p.kind === 'anvil')!.start('pay', network) as DevnetInstance;
  const deployed = instance.getSeed().stablecoin;
  t.equal(deployed?.payer.address, DEVNET_PAYER_ADDRESS);
  t.not(await instance.anvil.rpc<string>('eth_getCode', [deployed?.address, 'latest']), '0x');
});
