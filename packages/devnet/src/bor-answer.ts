import type { BorValidator } from './bor-validators.js';

/** The method the bor shim answers itself. */
export const BOR_VALIDATORS_METHOD = 'bor_getCurrentValidators';

/** A JSON-RPC request object the shim answers itself. */
export interface BorCall {
  /** `bor_getCurrentValidators`. */
  readonly method: typeof BOR_VALIDATORS_METHOD;
  /** The request id; absent for a notification. */
  readonly id?: unknown;
  /** The params; Bor accepts none. */
  readonly params?: unknown;
}

/** Whether a parsed JSON-RPC item is a call the shim answers itself. */
export function isBorCall(item: unknown): item is BorCall {
  return typeof item === 'object' && item !== null && !Array.isArray(item) && (item as { method?: unknown }).method === BOR_VALIDATORS_METHOD;
}

/**
 * The JSON-RPC response object to a {@link BorCall}, or `undefined` for a notification (no `id`).
 * Params follow go-ethereum's rules for a method without arguments: none, `null` or `[]` are accepted;
 * a non-empty array gets -32602 `too many arguments, want at most 0`, anything else -32602 `non-array args`.
 */
export function answerBorCall(call: BorCall, validators: readonly BorValidator[]): Record<string, unknown> | undefined {
  if (!('id' in call)) return undefined;
  const id = call.id ?? null;
  const { params } = call;
  if (params !== undefined && params !== null && !Array.isArray(params)) {
    return { jsonrpc: '2.0', id, error: { code: -32602, message: 'non-array args' } };
  }
  if (Array.isArray(params) && params.length > 0) {
    return { jsonrpc: '2.0', id, error: { code: -32602, message: 'too many arguments, want at most 0' } };
  }
  return { jsonrpc: '2.0', id, result: validators };
}
