import type { JsonRpcId } from '../contracts/json-rpc.js';

/** Serialises a JSON-RPC request. */
export function encodeRequest(id: JsonRpcId | undefined, method: string, params: unknown): string {
  const head = id === undefined ? '{"jsonrpc":"2.0"' : `{"jsonrpc":"2.0","id":${JSON.stringify(id)}`;
  return params === undefined
    ? `${head},"method":${JSON.stringify(method)}}`
    : `${head},"method":${JSON.stringify(method)},"params":${JSON.stringify(params)}}`;
}

/** Serialises a JSON-RPC error response. */
export function encodeError(id: JsonRpcId | undefined, error: { code: number; message: string; data?: unknown }): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id ?? null)},"error":${JSON.stringify(error)}}`;
}
