/**
 * What the instant node answers each method of the bench's mix with: results shaped and sized like a
 * mainnet node's (a block with 120 transaction hashes, a receipt with two logs, three Transfer logs, a
 * token account), made once, so the node costs nothing per call beyond writing them.
 */
import { createHash } from 'node:crypto';

const hash = (seed: string): string => `0x${createHash('sha256').update(seed).digest('hex')}`;
const address = (seed: string): string => hash(seed).slice(0, 42);
const word = (n: number): string => `0x${n.toString(16).padStart(64, '0')}`;
const TRANSFER = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

function log(i: number, block: number): Record<string, unknown> {
  return {
    address: address('token'),
    topics: [TRANSFER, `0x000000000000000000000000${address(`from${i}`).slice(2)}`, `0x000000000000000000000000${address(`to${i}`).slice(2)}`],
    data: word(1_000_000 + i),
    blockNumber: `0x${block.toString(16)}`,
    blockHash: hash(`block${block}`),
    transactionHash: hash(`tx${i}`),
    transactionIndex: `0x${i.toString(16)}`,
    logIndex: `0x${i.toString(16)}`,
    removed: false,
  };
}

const BLOCK = 21_000_000;
const results: Record<string, unknown> = {
  eth_getBlockByNumber: {
    number: `0x${BLOCK.toString(16)}`,
    hash: hash(`block${BLOCK}`),
    parentHash: hash(`block${BLOCK - 1}`),
    nonce: '0x0000000000000000',
    sha3Uncles: '0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347',
    logsBloom: `0x${'00'.repeat(256)}`,
    transactionsRoot: hash('txroot'),
    stateRoot: hash('stateroot'),
    receiptsRoot: hash('receiptsroot'),
    miner: address('builder'),
    difficulty: '0x0',
    totalDifficulty: '0xc70d815d562d3cfa955',
    extraData: '0x6265617665726275696c642e6f7267',
    size: '0x1d1a5',
    gasLimit: '0x1c9c380',
    gasUsed: '0xe4e1c0',
    timestamp: '0x672a9b7b',
    transactions: Array.from({ length: 120 }, (_, i) => hash(`tx${i}`)),
    uncles: [],
    baseFeePerGas: '0x2540be400',
    withdrawals: Array.from({ length: 16 }, (_, i) => ({ index: `0x${(5_000_000 + i).toString(16)}`, validatorIndex: `0x${(100_000 + i).toString(16)}`, address: address(`validator${i}`), amount: '0x11a5b8c' })),
    withdrawalsRoot: hash('withdrawals'),
    blobGasUsed: '0x20000',
    excessBlobGas: '0x0',
    parentBeaconBlockRoot: hash('beacon'),
    mixHash: hash('mix'),
  },
  eth_call: word(123_456_789_000),
  eth_getLogs: [log(1, BLOCK), log(2, BLOCK), log(3, BLOCK)],
  eth_getTransactionReceipt: {
    transactionHash: hash('tx1'),
    transactionIndex: '0x1',
    blockHash: hash(`block${BLOCK}`),
    blockNumber: `0x${BLOCK.toString(16)}`,
    from: address('from1'),
    to: address('token'),
    cumulativeGasUsed: '0x1a2b3',
    gasUsed: '0xb4f1',
    contractAddress: null,
    logs: [log(1, BLOCK), log(2, BLOCK)],
    logsBloom: `0x${'00'.repeat(256)}`,
    type: '0x2',
    effectiveGasPrice: '0x2e90edd000',
    status: '0x1',
  },
  getAccountInfo: {
    context: { apiVersion: '2.0.15', slot: 300_000_000 },
    value: {
      data: [Buffer.alloc(165, 7).toString('base64'), 'base64'],
      executable: false,
      lamports: 2_039_280,
      owner: 'TokenkegQfeYxiNwAJbNYGZJ8m1pKxvB2x3XLdPvsJZs',
      rentEpoch: 18_446_744_073_709_551_615,
      space: 165,
    },
  },
  eth_chainId: '0x7a69',
  eth_blockNumber: `0x${BLOCK.toString(16)}`,
};

/** The JSON of each method's result; methods not listed answer `0x7a69`. */
const encoded = new Map(Object.entries(results).map(([method, result]) => [method, JSON.stringify(result)]));

/** The result JSON the instant node answers `method` with. */
export function instantResult(method: string | undefined): string {
  return (method === undefined ? undefined : encoded.get(method)) ?? '"0x7a69"';
}
