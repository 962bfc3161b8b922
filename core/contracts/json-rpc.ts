// JSON-RPC 2.0 on the wire: ids, requests and answers. The error object is the errors' own wire form.
import type { JsonRpcErrorObject } from '../errors/json-rpc-error.js';

/** A JSON-RPC 2.0 request id. */
export type JsonRpcId = string | number | null;

/** A JSON-RPC 2.0 request. A request without `id` is a notification. */
export interface JsonRpcRequest {
  /** Always `"2.0"`. */
  jsonrpc: '2.0';
  /** Method name. */
  method: string;
  /** Positional (or named) parameters; absent for methods without parameters. */
  params?: unknown[] | Record<string, unknown>;
  /** Echoed in the response; absent for a notification. */
  id?: JsonRpcId;
}

/** A successful JSON-RPC 2.0 response. */
export interface JsonRpcSuccess {
  /** Always `"2.0"`. */
  jsonrpc: '2.0';
  /** The request's id. */
  id: JsonRpcId;
  /** Method-specific result. */
  result: unknown;
}

/** A failed JSON-RPC 2.0 response. */
export interface JsonRpcFailure {
  /** Always `"2.0"`. */
  jsonrpc: '2.0';
  /** The request's id, or null when it could not be read. */
  id: JsonRpcId;
  /** What went wrong. */
  error: JsonRpcErrorObject;
}

/** A JSON-RPC 2.0 response. */
export type JsonRpcResponse = JsonRpcSuccess | JsonRpcFailure;
