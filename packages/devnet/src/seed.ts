import { abiWord, bytes32, encodeCall, encodeErrorString, encodePanic, quantity, type Address, type Hex } from './abi-words.js';
import { JsonRpcClient } from './json-rpc-client.js';
import { SEED_CONTRACT } from './seed-contract.js';
import type { DevnetSeed, SeedOptions, SeededLogs, SeededTransaction } from './seed-types.js';
import { seedStablecoin } from './stablecoin.js';

/** The reason string of the seed contract's `fail(true)` (`require(!yes, ...)` in `tollgate-seed.sol`). */
export const SEED_REVERT_REASON = 'tollgate: seeded revert';

const GWEI = 1_000_000_000n;
const ETHER = 10n ** 18n;
const RECEIPT_TIMEOUT_MS = 30_000;

interface Receipt {
  transactionHash: Hex;
  type: Hex;
  from: Address;
  to: Address | null;
  contractAddress: Address | null;
  blockNumber: Hex;
  blockHash: Hex;
  transactionIndex: Hex;
  gasUsed: Hex;
  status: Hex;
  logs: unknown[];
}

interface BlockHead {
  gasLimit: Hex;
  baseFeePerGas?: Hex;
}

type TxRequest = Record<string, unknown> & { from: Address };

function summarize(receipt: Receipt): SeededTransaction {
  return {
    hash: receipt.transactionHash,
    type: receipt.type,
    from: receipt.from,
    to: receipt.to,
    blockNumber: Number(receipt.blockNumber),
    blockHash: receipt.blockHash,
    index: Number(receipt.transactionIndex),
    gasUsed: Number(receipt.gasUsed),
    logs: receipt.logs.length,
  };
}

function logGroup(transactions: SeededTransaction[]): SeededLogs {
  return {
    count: transactions.reduce((sum, tx) => sum + tx.logs, 0),
    fromBlock: Math.min(...transactions.map((tx) => tx.blockNumber)),
    toBlock: Math.max(...transactions.map((tx) => tx.blockNumber)),
    transactions,
  };
}

/** Sends transactions from unlocked accounts with explicit nonces, and mines them in chosen groups. */
class Seeder {
  readonly #nonces = new Map<Address, bigint>();

  constructor(private readonly client: JsonRpcClient) {}

  rpc<T>(method: string, params: readonly unknown[] = []): Promise<T> {
    return this.client.call<T>(method, params);
  }

  async #nonce(from: Address): Promise<Hex> {
    let next = this.#nonces.get(from);
    if (next === undefined) next = BigInt(await this.rpc<Hex>('eth_getTransactionCount', [from, 'latest']));
    this.#nonces.set(from, next + 1n);
    return quantity(next);
  }

  async send(tx: TxRequest): Promise<Hex> {
    return this.rpc<Hex>('eth_sendTransaction', [{ ...tx, nonce: await this.#nonce(tx.from) }]);
  }

  /** Sends `txs` (in order), mines a block, and returns their receipts. */
  async block(...txs: TxRequest[]): Promise<Receipt[]> {
    const hashes: Hex[] = [];
    for (const tx of txs) hashes.push(await this.send(tx));
    await this.rpc('evm_mine');
    return Promise.all(hashes.map((hash) => this.#receipt(hash)));
  }

  async #receipt(hash: Hex): Promise<Receipt> {
    const deadline = Date.now() + RECEIPT_TIMEOUT_MS;
    for (;;) {
      const receipt = await this.rpc<Receipt | null>('eth_getTransactionReceipt', [hash]);
      if (receipt !== null) {
        if (receipt.status !== '0x1') throw new Error(`seed transaction ${hash} failed (status ${receipt.status})`);
        return receipt;
      }
      if (Date.now() > deadline) throw new Error(`seed transaction ${hash} was not mined within ${RECEIPT_TIMEOUT_MS} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** EIP-1559 fees and a legacy gas price that comfortably clear the next base fee. */
  async fees(): Promise<{ maxFeePerGas: Hex; maxPriorityFeePerGas: Hex; gasPrice: Hex }> {
    const head = await this.rpc<BlockHead>('eth_getBlockByNumber', ['latest', false]);
    const base = head.baseFeePerGas !== undefined ? BigInt(head.baseFeePerGas) : BigInt(await this.rpc<Hex>('eth_gasPrice'));
    const tip = GWEI;
    const cap = base * 2n + tip;
    return { maxFeePerGas: quantity(cap), maxPriorityFeePerGas: quantity(tip), gasPrice: quantity(cap) };
  }
}

/**
 * Seeds a fresh Anvil (or any node with unlocked accounts and `evm_mine`): deploys the seed contract and
 * sends value transfers of three transaction types and event-emitting calls, then optionally `bulkLogs`
 * more `Ping` logs and (with `stablecoin: true`) the test stablecoin with its funded x402 payer. Automine is switched off while seeding so that chosen transactions share a block,
 * and restored afterwards; under interval mining the groups may split, and the returned facts still
 * describe where each transaction really landed.
 *
 * @example
 * ```ts
 * const anvil = await startAnvil();
 * const seed = await seedDevnet(anvil.url);
 * await anvil.rpc('eth_getLogs', [{ fromBlock: quantity(seed.logs.fromBlock), address: seed.contract.address }]);
 * ```
 */
export async function seedDevnet(url: string, options: SeedOptions = {}): Promise<DevnetSeed> {
  const client = new JsonRpcClient(url);
  try {
    return await seed(new Seeder(client), options);
  } finally {
    await client.close();
  }
}

async function seed(s: Seeder, options: SeedOptions): Promise<DevnetSeed> {
  const accounts = await s.rpc<Address[]>('eth_accounts');
  if (accounts.length === 0) throw new Error('cannot seed: the node has no unlocked accounts');
  const account = (i: number): Address => accounts[i % accounts.length] as Address;
  const chainId = Number(BigInt(await s.rpc<Hex>('eth_chainId')));
  const automine = await s.rpc<boolean>('anvil_getAutomine').catch(() => false);
  if (automine) await s.rpc('evm_setAutomine', [false]);
  try {
    const { selectors } = SEED_CONTRACT;
    const deployFees = await s.fees();
    const [deployReceipt] = await s.block({
      from: account(0), data: SEED_CONTRACT.bytecode,
      maxFeePerGas: deployFees.maxFeePerGas, maxPriorityFeePerGas: deployFees.maxPriorityFeePerGas, type: '0x2',
    });
    const address = deployReceipt?.contractAddress;
    if (deployReceipt === undefined || address === null || address === undefined) throw new Error('the seed contract was not deployed');

    const fees = await s.fees();
    const transfers = await s.block(
      { from: account(0), to: account(1), value: quantity(ETHER), maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas, type: '0x2' },
      { from: account(1), to: account(2), value: quantity(ETHER / 2n), gasPrice: fees.gasPrice, type: '0x0' },
      {
        from: account(2), to: address, data: selectors.pings, gasPrice: fees.gasPrice, type: '0x1',
        accessList: [{ address, storageKeys: [`0x${abiWord(0)}`] }],
      },
    );

    const tags = { ping: bytes32('tollgate-seed'), pingOther: bytes32('tollgate-seed-b'), bulk: bytes32('tollgate-bulk') };
    const pingFees = await s.fees();
    const pings = await s.block(
      { from: account(0), to: address, data: encodeCall(selectors.ping, abiWord(3), tags.ping), maxFeePerGas: pingFees.maxFeePerGas, maxPriorityFeePerGas: pingFees.maxPriorityFeePerGas, type: '0x2' },
      { from: account(3), to: address, data: encodeCall(selectors.ping, abiWord(2), tags.pingOther), maxFeePerGas: pingFees.maxFeePerGas, maxPriorityFeePerGas: pingFees.maxPriorityFeePerGas, type: '0x2' },
    );

    const bulk: SeededTransaction[] = [];
    const perTx = Math.max(1, options.logsPerTransaction ?? 5_000);
    for (let left = options.bulkLogs ?? 0; left > 0; left -= perTx) {
      const count = Math.min(left, perTx);
      const bulkFees = await s.fees();
      const [receipt] = await s.block({
        from: account(0), to: address, data: encodeCall(selectors.ping, abiWord(count), tags.bulk),
        maxFeePerGas: bulkFees.maxFeePerGas, maxPriorityFeePerGas: bulkFees.maxPriorityFeePerGas, type: '0x2',
      });
      bulk.push(summarize(receipt as Receipt));
    }

    const stablecoin = options.stablecoin === true ? await seedStablecoin(s, account(0)) : undefined;

    const [eip1559Transfer, legacyTransfer, accessList] = transfers.map(summarize) as [SeededTransaction, SeededTransaction, SeededTransaction];
    const [ping, pingOther] = pings.map(summarize) as [SeededTransaction, SeededTransaction];
    const head = await s.rpc<BlockHead>('eth_getBlockByNumber', ['latest', false]);
    const totalLogs = Number(BigInt(await s.rpc<Hex>('eth_call', [{ to: address, data: selectors.pings }, 'latest'])));
    const zero: Address = `0x${'00'.repeat(20)}`;
    return {
      chainId,
      accounts,
      blockGasLimit: Number(BigInt(head.gasLimit)),
      contract: { address, artifact: SEED_CONTRACT },
      transactions: { deploy: summarize(deployReceipt), eip1559Transfer, legacyTransfer, accessList, ping, pingOther },
      logs: logGroup([ping, pingOther]),
      bulkLogs: bulk.length > 0 ? logGroup(bulk) : undefined,
      totalLogs,
      tags,
      revert: {
        call: encodeCall(selectors.fail, abiWord(true)),
        reason: SEED_REVERT_REASON,
        message: `execution reverted: ${SEED_REVERT_REASON}`,
        data: encodeErrorString(SEED_REVERT_REASON),
      },
      panic: { call: selectors.panic, code: 1, data: encodePanic(1) },
      customError: { call: encodeCall(selectors.deny, abiWord(7)), data: encodeCall(SEED_CONTRACT.deniedSelector, abiWord(zero), abiWord(7)) },
      calls: { gasLeft: selectors.gasLeft, pings: selectors.pings, succeed: encodeCall(selectors.fail, abiWord(false)) },
      stablecoin,
      latestBlock: Number(BigInt(await s.rpc<Hex>('eth_blockNumber'))),
    };
  } finally {
    if (automine) await s.rpc('evm_setAutomine', [true]);
  }
}
