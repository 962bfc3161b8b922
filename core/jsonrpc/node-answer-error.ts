import type { JsonRpcErrorObject } from '../errors/json-rpc-error.js';

/**
 * A node's JSON-RPC error answer to a network's own call ({@link NetworkRuntime.rpc}): the node answered,
 * and its answer is an error. It carries the node's error object, so a family hook can tell one answer
 * from another by the node's code and words (a block range the node finds too wide, say) and hand the
 * client the node's answer unchanged.
 */
export class NodeAnswerError extends Error {
  /** The node's error object: code, message and data as the node sent them. */
  readonly error: JsonRpcErrorObject;

  constructor(method: string, upstream: string, error: JsonRpcErrorObject) {
    super(`${method} failed on ${upstream}: ${error.message}`);
    this.name = 'NodeAnswerError';
    this.error = error;
  }
}
