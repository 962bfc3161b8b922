/**
 * The evm family's response-cache policies: how long each method's answers stay true, by the block they
 * are about. Methods absent here (writes, filters, `eth_sendRawTransaction`) are never cached.
 *
 * @module
 */
import type { CacheScope, ChainHead, FamilyCachePolicies, MethodCachePolicy, NetworkRuntime } from '../../core/family-api.js';
import { EVM_FAMILY_NAME } from './family.js';

/** Blocks below the head taken as final when a node does not answer the `finalized` tag (two Ethereum epochs doubled, for chains with deeper reorgs). */
export const FINALITY_FALLBACK_DEPTH = 128;

const FOREVER: CacheScope = { scope: 'forever' };
const HEAD: CacheScope = { scope: 'head' };
const ANSWER: CacheScope = { scope: 'answer' };
const UNFINALIZED: CacheScope = { scope: 'unfinalized' };
const QUANTITY = /^0x[0-9a-fA-F]{1,16}$/;

function quantity(value: unknown): number | undefined {
  return typeof value === 'string' && QUANTITY.test(value) ? Number.parseInt(value.slice(2), 16) : undefined;
}

/**
 * The scope of a read at a block identifier: a height is about that block; `earliest` is the genesis
 * block; `latest`, `safe` and `finalized` move with the chain, so they are resolved against the tracked
 * head (the `finalized` tag is never kept as if immutable); `pending` is never cached; an EIP-1898
 * `{ blockHash }` is kept until the next reorg. A missing tag means `latest`.
 */
export function blockScope(block: unknown): CacheScope | undefined {
  if (block === undefined || block === 'latest' || block === 'safe' || block === 'finalized') return HEAD;
  if (block === 'earliest') return { scope: 'block', block: 0 };
  const height = quantity(block);
  if (height !== undefined) return { scope: 'block', block: height };
  if (typeof block === 'object' && block !== null) {
    const id = block as { blockNumber?: unknown; blockHash?: unknown };
    if (id.blockNumber !== undefined) return blockScope(id.blockNumber);
    if (typeof id.blockHash === 'string') return UNFINALIZED;
  }
  return undefined;
}

const arg = (params: unknown, index: number): unknown => (Array.isArray(params) ? params[index] : undefined);

/** A read at the block named by parameter `index`. */
const atBlockParam = (index: number): MethodCachePolicy => ({ scope: (params) => blockScope(arg(params, index)) });

/** A read about the head (gas price, the block number): kept until the head moves. */
const atHead: MethodCachePolicy = { scope: () => HEAD };

/** A read whose answer names its block in `blockNumber` (transactions and receipts by hash, once mined). */
const minedAnswer: MethodCachePolicy = { scope: () => ANSWER, blockOf: (result) => quantity((result as { blockNumber?: unknown } | null)?.blockNumber) };

/** The height of a block object's `number`. */
const blockAnswer: MethodCachePolicy = { scope: () => ANSWER, blockOf: (result) => quantity((result as { number?: unknown } | null)?.number) };

/** A log filter: a range is about its `toBlock` (default `latest`); a `blockHash` filter is kept until the next reorg, and only when it found logs. */
const getLogs: MethodCachePolicy = {
  scope: (params) => {
    const filter = arg(params, 0) as { blockHash?: unknown; fromBlock?: unknown; toBlock?: unknown } | undefined;
    if (filter === undefined) return undefined;
    if (filter.blockHash !== undefined) return UNFINALIZED;
    if (filter.fromBlock === 'pending' || filter.toBlock === 'pending') return undefined;
    return blockScope(filter.toBlock);
  },
  // By block hash, an empty answer may mean the node does not know the block yet.
  keep: (result, params) => Array.isArray(result) && ((arg(params, 0) as { blockHash?: unknown }).blockHash === undefined || result.length > 0),
};

/** `eth_estimateGas` and `eth_createAccessList` default to `pending` on some clients: cached only with an explicit block. */
const explicitBlock = (index: number): MethodCachePolicy => ({
  scope: (params) => (arg(params, index) === undefined ? undefined : blockScope(arg(params, index))),
});

/** Reads the head block and the finalized block (or the head less `FINALITY_FALLBACK_DEPTH`). */
export async function readEvmHead(network: NetworkRuntime): Promise<ChainHead> {
  const [latest, finalized] = await Promise.all([
    network.rpc('eth_getBlockByNumber', ['latest', false]),
    network.rpc('eth_getBlockByNumber', ['finalized', false]).catch(() => undefined),
  ]);
  const head = latest as { number?: unknown; hash?: unknown; parentHash?: unknown } | null;
  const number = quantity(head?.number);
  if (number === undefined || typeof head?.hash !== 'string' || typeof head.parentHash !== 'string') throw new Error('the latest block has no number or hash');
  const final = quantity((finalized as { number?: unknown } | null | undefined)?.number);
  return { number, hash: head.hash, parentHash: head.parentHash, finalized: Math.min(number, final ?? Math.max(0, number - FINALITY_FALLBACK_DEPTH)) };
}

/** The policies of every cacheable evm method. */
export const EVM_CACHE_POLICIES: FamilyCachePolicies = {
  family: EVM_FAMILY_NAME,
  readHead: readEvmHead,
  async readBlockHash(network, height) {
    const block = (await network.rpc('eth_getBlockByNumber', [`0x${height.toString(16)}`, false])) as { hash?: unknown } | null;
    return typeof block?.hash === 'string' ? block.hash : undefined;
  },
  methods: {
    eth_chainId: { scope: () => FOREVER },
    net_version: { scope: () => FOREVER },
    web3_clientVersion: atHead,
    eth_syncing: atHead,
    eth_blockNumber: atHead,
    eth_gasPrice: atHead,
    eth_maxPriorityFeePerGas: atHead,
    eth_feeHistory: atBlockParam(1),
    eth_getBlockByNumber: atBlockParam(0),
    eth_getBlockByHash: blockAnswer,
    eth_getBlockTransactionCountByNumber: atBlockParam(0),
    eth_getBlockTransactionCountByHash: { scope: () => UNFINALIZED },
    eth_getUncleCountByBlockNumber: atBlockParam(0),
    eth_getUncleCountByBlockHash: { scope: () => UNFINALIZED },
    eth_getUncleByBlockNumberAndIndex: atBlockParam(0),
    eth_getUncleByBlockHashAndIndex: blockAnswer,
    eth_getTransactionByHash: minedAnswer,
    eth_getTransactionReceipt: minedAnswer,
    eth_getTransactionByBlockNumberAndIndex: atBlockParam(0),
    eth_getTransactionByBlockHashAndIndex: minedAnswer,
    eth_getBlockReceipts: {
      scope: (params) => {
        const id = arg(params, 0);
        return typeof id === 'string' && id.length === 66 ? ANSWER : blockScope(id);
      },
      blockOf: (result) => (Array.isArray(result) && result.length > 0 ? quantity((result[0] as { blockNumber?: unknown }).blockNumber) : undefined),
      keep: (result) => Array.isArray(result),
    },
    eth_getLogs: getLogs,
    eth_getBalance: atBlockParam(1),
    eth_getCode: atBlockParam(1),
    eth_getStorageAt: atBlockParam(2),
    eth_getTransactionCount: atBlockParam(1),
    eth_call: atBlockParam(1),
    eth_estimateGas: explicitBlock(1),
    eth_createAccessList: explicitBlock(1),
  },
};
