/**
 * The calls the `solana-http` scenario sends: the reads a Solana wallet or dApp makes most, with params,
 * against accounts and a transaction the scenario made on the node first.
 */
import { checkJsonRpcAnswer } from './json-rpc-request.js';
import type { LoadRequest } from './load.js';

/** What the mix reads: funded accounts and a landed transaction's signature. */
export interface SolanaReadTargets {
  /** Accounts with lamports (at least two). */
  readonly accounts: readonly string[];
  /** A confirmed transaction's signature. */
  readonly signature: string;
}

/**
 * The sequence each connection cycles through: `getAccountInfo` 3 of 10, `getBalance` 2 of 10,
 * `getMultipleAccounts` 2 of 10, `getLatestBlockhash` 2 of 10, `getTransaction` 1 of 10, at `confirmed`.
 */
export function solanaMixCalls(targets: SolanaReadTargets): Array<{ method: string; params: unknown[] }> {
  const [first, second] = targets.accounts as [string, string];
  const confirmed = { commitment: 'confirmed' };
  const account = { method: 'getAccountInfo', params: [first, { ...confirmed, encoding: 'base64' }] };
  const balance = { method: 'getBalance', params: [second, confirmed] };
  const multiple = { method: 'getMultipleAccounts', params: [targets.accounts, { ...confirmed, encoding: 'base64' }] };
  const blockhash = { method: 'getLatestBlockhash', params: [confirmed] };
  const transaction = { method: 'getTransaction', params: [targets.signature, { ...confirmed, encoding: 'json', maxSupportedTransactionVersion: 0 }] };
  return [account, balance, multiple, blockhash, account, transaction, balance, multiple, blockhash, account];
}

/** A one-line description of the mix, for the report's notes. */
export const SOLANA_MIX_DESCRIPTION = 'getAccountInfo(base64) 30%, getBalance 20%, getMultipleAccounts(base64) 20%, getLatestBlockhash 20%, getTransaction(json) 10%, all at confirmed';

/** The load request of the mix on `path`. A response counts when it is a JSON-RPC answer with a `result`. */
export function solanaMixRequest(path: string, targets: SolanaReadTargets): LoadRequest {
  const mix = solanaMixCalls(targets).map((c) => ({ path, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: c.method, params: c.params }) }));
  return {
    method: 'POST',
    path,
    headers: { 'content-type': 'application/json' },
    body: mix[0]!.body,
    mix,
    check: (_status, body) => checkJsonRpcAnswer(body, () => true),
  };
}
