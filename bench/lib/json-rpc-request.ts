import type { LoadRequest } from './load.js';

/** Methods the JSON-RPC scenarios may send: both take no params and answer a hex string. */
export const BENCH_METHODS: ReadonlySet<string> = new Set(['eth_chainId', 'eth_blockNumber']);

/** Throws a readable error unless `method` is one of {@link BENCH_METHODS}. */
export function checkBenchMethod(method: string): void {
  if (!BENCH_METHODS.has(method)) throw new Error(`--method must be one of ${[...BENCH_METHODS].join(', ')} (got ${method})`);
}

/** The request sent to every target: only the path differs. Only a JSON-RPC result with id 1 counts. */
export function jsonRpcRequest(method: string, path: string): LoadRequest {
  return {
    method: 'POST',
    path,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: [] }),
    check: (_status, body) => checkJsonRpcAnswer(body, (result) => typeof result === 'string'),
  };
}

/** Whether `body` is a JSON-RPC success with id 1 whose result passes `isResult`; else what is wrong with it. */
export function checkJsonRpcAnswer(body: string, isResult: (result: unknown) => boolean): true | string {
  let parsed: { jsonrpc?: unknown; id?: unknown; result?: unknown; error?: unknown };
  try {
    parsed = JSON.parse(body) as typeof parsed;
  } catch {
    return 'not JSON';
  }
  if (parsed.error !== undefined) return 'JSON-RPC error';
  if (parsed.jsonrpc !== '2.0' || parsed.id !== 1) return 'wrong jsonrpc/id';
  if (!('result' in parsed) || !isResult(parsed.result)) return 'no result';
  return true;
}
