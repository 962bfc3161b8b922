/**
 * JSON-RPC errors as agave's jsonrpc-core and `RpcCustomError` word them.
 *
 * @module
 */

/** An error a method answers with: code, message and optional data. */
export class RpcError extends Error {
  /**
   * @param code - JSON-RPC error code.
   * @param message - Error message.
   * @param data - Optional `error.data`.
   */
  constructor(readonly code: number, message: string, readonly data?: unknown) {
    super(message);
    this.name = 'RpcError';
  }

  /** jsonrpc-core's invalid-params error (`-32602`). */
  static invalidParams(message: string, data?: unknown): RpcError {
    return new RpcError(-32602, message, data);
  }

  /** jsonrpc-core's invalid-request error (`-32600`), with agave's own message where it gives one. */
  static invalidRequest(message = 'Invalid request'): RpcError {
    return new RpcError(-32600, message);
  }

  /** agave's `RpcCustomError::MinContextSlotNotReached` (`-32016`). */
  static minContextSlotNotReached(contextSlot: bigint): RpcError {
    return new RpcError(-32016, 'Minimum context slot has not been reached', { contextSlot });
  }
}
