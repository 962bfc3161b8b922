import { abiWord, encodeCall, type Address, type Hex } from './abi-words.js';
import type { CompiledContract } from './compiled-contract.js';
import { MULTICALL_CONTRACT, STABLECOIN_CONTRACT } from './stablecoin-contract.js';

/**
 * The private key of the devnet's demo x402 payer: `keccak256("tollgate devnet x402 payer")`. It is
 * public, in this source: **devnet only**. Anything sent to its address on a real chain is anyone's.
 */
export const DEVNET_PAYER_KEY: Hex = '0xee8e866dd2078fcd759970ec233725fc33aa4cb459fe3e266daf229252cdc3aa';

/** The address of {@link DEVNET_PAYER_KEY}. */
export const DEVNET_PAYER_ADDRESS: Address = '0x2dF8d63A17D2d3370E656769B956F1b3941C1E7B';

/** Multicall3's address on public chains, where the devnet places {@link MULTICALL_CONTRACT}'s code. */
export const MULTICALL3_ADDRESS: Address = '0xcA11bde05977b3631167028862bE2a173976CA11';

/** What the demo payer holds after seeding: 1,000,000 tUSD in atomic units (6 decimals). */
export const DEVNET_PAYER_FUNDS = 1_000_000n * 10n ** 6n;

/** The devnet's deployed test stablecoin, with what an x402 offer and a payer need. */
export interface DevnetStablecoin {
  /** Its address (the x402 `asset`). */
  readonly address: Address;
  /** ABI, bytecode and selectors (by signature). */
  readonly artifact: CompiledContract;
  /** EIP-712 domain name, `Tollgate Devnet USD` (an x402 requirement's `extra.name`). */
  readonly name: string;
  /** EIP-712 domain version, `2` as USDC's (an x402 requirement's `extra.version`). */
  readonly version: string;
  /** `tUSD`. */
  readonly symbol: string;
  /** 6, as USDC. */
  readonly decimals: number;
  /** The account that deployed it and alone may mint (the devnet's first account). */
  readonly minter: Address;
  /** Where Multicall3's `tryAggregate` answers (`undefined` on a node without `anvil_setCode`). */
  readonly multicall: Address | undefined;
  /** The funded demo payer. It holds no ether: an EIP-3009 payer pays no gas. */
  readonly payer: {
    /** {@link DEVNET_PAYER_ADDRESS}. */
    readonly address: Address;
    /** {@link DEVNET_PAYER_KEY}: devnet only. */
    readonly privateKey: Hex;
    /** Its balance once seeded, in atomic units, as a decimal string (x402 amounts are strings). */
    readonly balance: string;
  };
  /** The deployment's and the mint's transaction hashes. */
  readonly transactions: { readonly deploy: Hex; readonly mint: Hex };
}

/** What the seeder offers this step: calls, and sending transactions that a mined block holds. */
export interface StablecoinSender {
  /** Calls a JSON-RPC method. */
  rpc<T>(method: string, params?: readonly unknown[]): Promise<T>;
  /** Sends `txs`, mines a block, and returns their receipts. */
  block(...txs: Array<Record<string, unknown> & { from: Address }>): Promise<Array<{ transactionHash: Hex; contractAddress: Address | null }>>;
  /** Fees that clear the next block's base fee. */
  fees(): Promise<{ maxFeePerGas: Hex; maxPriorityFeePerGas: Hex }>;
}

/**
 * Deploys the test stablecoin from `minter` (one block), mints {@link DEVNET_PAYER_FUNDS} to the demo
 * payer (the next block), and places Multicall3's `tryAggregate` at its canonical address (x402
 * facilitators read through it to say why a payment would fail).
 */
export async function seedStablecoin(s: StablecoinSender, minter: Address): Promise<DevnetStablecoin> {
  const eip1559 = async (): Promise<{ maxFeePerGas: Hex; maxPriorityFeePerGas: Hex; type: Hex }> => {
    const { maxFeePerGas, maxPriorityFeePerGas } = await s.fees();
    return { maxFeePerGas, maxPriorityFeePerGas, type: '0x2' };
  };
  const [deploy] = await s.block({ from: minter, data: STABLECOIN_CONTRACT.bytecode, ...(await eip1559()) });
  const address = deploy?.contractAddress;
  if (deploy === undefined || address === null || address === undefined) throw new Error('the stablecoin was not deployed');
  const mintCall = encodeCall(selector('mint(address,uint256)'), abiWord(DEVNET_PAYER_ADDRESS), abiWord(DEVNET_PAYER_FUNDS));
  const [mint] = await s.block({ from: minter, to: address, data: mintCall, ...(await eip1559()) });
  const multicall = await s.rpc('anvil_setCode', [MULTICALL3_ADDRESS, MULTICALL_CONTRACT.deployedBytecode]).then(() => MULTICALL3_ADDRESS, () => undefined);
  const balance = BigInt(await s.rpc<Hex>('eth_call', [{ to: address, data: encodeCall(selector('balanceOf(address)'), abiWord(DEVNET_PAYER_ADDRESS)) }, 'latest']));
  return {
    address,
    artifact: STABLECOIN_CONTRACT,
    name: 'Tollgate Devnet USD',
    version: '2',
    symbol: 'tUSD',
    decimals: 6,
    minter,
    multicall,
    payer: { address: DEVNET_PAYER_ADDRESS, privateKey: DEVNET_PAYER_KEY, balance: balance.toString() },
    transactions: { deploy: deploy.transactionHash, mint: (mint as { transactionHash: Hex }).transactionHash },
  };
}

function selector(signature: string): Hex {
  const id = STABLECOIN_CONTRACT.selectors[signature];
  if (id === undefined) throw new Error(`the stablecoin has no ${signature}`);
  return id;
}
