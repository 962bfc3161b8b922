/**
 * The calls the HTTP scenarios send: a realistic mix of the spec's methods with params, the reads
 * wallets, explorers and indexers make, instead of one call without params. Every connection cycles
 * through the same sequence, so every target answers exactly the same calls. Shared by `http-instant`,
 * `http-json-rpc` and `ledgers`.
 */
import { checkJsonRpcAnswer } from './json-rpc-request.js';
import type { LoadRequest } from './load.js';

/** What the mix reads on an EVM chain: a contract (or any address) to call, and a mined transaction. */
export interface EvmReadTargets {
  /** The address `eth_call` and `eth_getLogs` address. */
  readonly address: string;
  /** A mined transaction's hash, for `eth_getTransactionReceipt`. */
  readonly transaction: string;
}

/** Where a target takes each network's calls. */
export interface MixPaths {
  /** Path of the EVM network's calls. */
  readonly evm: string;
  /** Path of the Solana network's calls; absent: the mix has no Solana call. */
  readonly solana?: string;
}

/** One call of the mix. */
export interface MixCall {
  /** Which network it goes to. */
  readonly network: 'evm' | 'solana';
  /** JSON-RPC method. */
  readonly method: string;
  /** Its params. */
  readonly params: readonly unknown[];
}

/** `balanceOf(address)` of an ERC-20: the most common `eth_call`. */
const BALANCE_OF = '0x70a08231000000000000000000000000f39fd6e51aad88f6f4ce6ab8827279cfffb92266';
/** The ERC-20 `Transfer` event topic. */
const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
/** A token account on Solana (getAccountInfo's most common subject). */
const SOLANA_ACCOUNT = '4fYNw3dojWmQ4dXtSGE9epjRGy9pFSx62YypT7avPYvA';

/**
 * The sequence each connection sends, in order, with the share of each method: block by number 3 of 10,
 * `eth_call` 3 of 10, logs 1 of 10, receipt 2 of 10 and, when the target serves Solana,
 * `getAccountInfo` 1 of 10 (else another `eth_call`).
 */
export function mixCalls(targets: EvmReadTargets, solana: boolean): MixCall[] {
  const block: MixCall = { network: 'evm', method: 'eth_getBlockByNumber', params: ['latest', false] };
  const call: MixCall = { network: 'evm', method: 'eth_call', params: [{ to: targets.address, data: BALANCE_OF }, 'latest'] };
  const logs: MixCall = { network: 'evm', method: 'eth_getLogs', params: [{ fromBlock: 'latest', toBlock: 'latest', address: targets.address, topics: [TRANSFER_TOPIC] }] };
  const receipt: MixCall = { network: 'evm', method: 'eth_getTransactionReceipt', params: [targets.transaction] };
  const account: MixCall = solana
    ? { network: 'solana', method: 'getAccountInfo', params: [SOLANA_ACCOUNT, { encoding: 'base64', commitment: 'confirmed' }] }
    : call;
  return [block, call, receipt, block, call, logs, block, call, receipt, account];
}

/** A one-line description of the mix, for the report's notes. */
export function describeMix(solana: boolean): string {
  return `a mix of real calls with params, cycled per connection: eth_getBlockByNumber(["latest", false]) 30%, eth_call(balanceOf) ${solana ? 30 : 40}%, eth_getTransactionReceipt 20%, eth_getLogs(address + Transfer topic) 10%${solana ? ', getAccountInfo(base64) 10% on a Solana network' : ''}`;
}

/**
 * The load request of the mix: each call of {@link mixCalls} to its network's path. A response counts
 * when it is a JSON-RPC answer with id 1 and a `result` (a block, a receipt, `[]`, `null` alike).
 */
export function mixRequest(paths: MixPaths, targets: EvmReadTargets): LoadRequest {
  const calls = mixCalls(targets, paths.solana !== undefined);
  const mix = calls.map((c) => ({ path: c.network === 'solana' ? paths.solana! : paths.evm, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: c.method, params: c.params }) }));
  return {
    method: 'POST',
    path: mix[0]!.path,
    headers: { 'content-type': 'application/json' },
    body: mix[0]!.body,
    mix,
    check: (_status, body) => checkJsonRpcAnswer(body, () => true),
  };
}

/**
 * Read targets on a fresh Anvil: one transfer between two of its unlocked accounts, mined at once, so
 * `eth_getTransactionReceipt` reads a real receipt; the calls and log filters address the sender.
 */
export async function anvilReadTargets(url: string): Promise<EvmReadTargets> {
  const rpc = async (method: string, params: readonly unknown[]): Promise<unknown> => {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
    const answer = (await res.json()) as { result?: unknown; error?: { message: string } };
    if (answer.error !== undefined) throw new Error(`${method}: ${answer.error.message}`);
    return answer.result;
  };
  const [from, to] = (await rpc('eth_accounts', [])) as [string, string];
  const transaction = (await rpc('eth_sendTransaction', [{ from, to, value: '0x1' }])) as string;
  return { address: from, transaction };
}
