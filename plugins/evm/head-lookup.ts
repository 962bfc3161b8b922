/**
 * The gateway's own lookups of the chain head for a client's call (a filter's start, a log range to
 * `latest`). A node's answer to such a lookup is the gateway's, not the client's: when it is an error,
 * the call gets `HEAD_UNKNOWN`, which names the lookup and quotes the node, never the node's error as if
 * it answered the client's request.
 *
 * @module
 */
import { Errors, GatewayError } from '../../core/plugin-api.js';
import { NodeAnswerError, type NetworkRuntime } from '../../core/family-api.js';

/** Runs `method` on the network as a head lookup; a node's error (or "method not found") becomes `HEAD_UNKNOWN`. */
export async function lookupHead(network: NetworkRuntime, method: string, params: readonly unknown[]): Promise<unknown> {
  try {
    return await network.rpc(method, params);
  } catch (error) {
    if (error instanceof NodeAnswerError) throw headUnknown(network, error.message);
    if (GatewayError.is(error) && error.entry.name === Errors.METHOD_NOT_FOUND.name) throw headUnknown(network, `${method}: ${error.message}`);
    throw error;
  }
}

/** `HEAD_UNKNOWN` for `network`, saying which lookup failed and how. */
export function headUnknown(network: NetworkRuntime, what: string): GatewayError {
  return new GatewayError(Errors.HEAD_UNKNOWN, { message: `the gateway could not learn the head of ${network.name}: ${what}`, headers: { 'retry-after': '1' } });
}
