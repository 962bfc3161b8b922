import type { JsonRpcErrorObject } from '../errors/json-rpc-error.js';

/** What one JSON-RPC answer says: its result, or the node's error. */
export type JsonRpcAnswer =
  | { readonly result: unknown; readonly error?: undefined }
  | { readonly result?: undefined; readonly error: JsonRpcErrorObject };

/**
 * Reads one JSON-RPC answer (not a batch) from an upstream's bytes.
 *
 * @throws Error when the bytes are not a JSON object with a `result` or an `error` object.
 */
export function decodeAnswer(body: Uint8Array): JsonRpcAnswer {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const parsed = JSON.parse(bytes.toString('utf8')) as unknown;
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('the answer is not a JSON-RPC response object');
  const { result, error } = parsed as { result?: unknown; error?: unknown };
  if (error !== undefined && error !== null) {
    if (typeof error !== 'object') throw new Error('the answer\'s error is not an object');
    const { code, message, data } = error as { code?: unknown; message?: unknown; data?: unknown };
    return { error: { code: typeof code === 'number' ? code : 0, message: typeof message === 'string' ? message : String(message), ...(data === undefined ? {} : { data }) } };
  }
  if (!('result' in (parsed as object))) throw new Error('the answer has neither a result nor an error');
  return { result };
}
