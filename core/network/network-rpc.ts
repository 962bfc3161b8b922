import type { MethodDefinition, Network } from '../contracts/request-context.js';
import type { StageDependencies } from '../contracts/stage.js';
import type { NetworkRpc } from './network.js';
import { CallContext } from '../context/call-context.js';
import { isJsonRpcProtocol } from '../jsonrpc/json-rpc-protocol.js';
import { encodeRequest } from '../jsonrpc/encode.js';
import { decodeAnswer } from '../jsonrpc/decode.js';
import { NodeAnswerError } from '../jsonrpc/node-answer-error.js';
import { createUpstreamSender } from '../upstream/upstream-sender.js';

/** The transport name of the contexts of a network's own calls, as attempt observers see them. */
export const NETWORK_RPC_TRANSPORT = 'network-rpc';

/** A method the network's families do not define: sent once, never resent after it may have arrived. */
function unlistedMethod(name: string): MethodDefinition {
  return { name, params: {}, credits: 0, idempotent: false };
}

/**
 * The gateway's {@link NetworkRpc}: a network's own call (a family hook's lookup, a cache's head) is a
 * call like a client's, minus the key, the charge and the stages. It gets a context of its own, the
 * selector's route for it (`select`), and goes through the same {@link createUpstreamSender} as
 * `dispatch`: admission and breakers, failover within the network's deadline, the method's own timeout,
 * outcomes fed back to the selector (except that a node's "method not found" to it skips the node for no
 * client's call). The answer is read as JSON-RPC: its result, or the node's error as a
 * {@link NodeAnswerError}.
 */
export function createNetworkRpc(deps: StageDependencies): NetworkRpc {
  // The network's own requests are not the clients': a node's -32601 to one bans no method for them.
  const send = createUpstreamSender(deps, { learnsMethodBans: false });
  let ids = 0;
  return async (network: Network, method: string, params: readonly unknown[]): Promise<unknown> => {
    if (!isJsonRpcProtocol(network.protocol)) throw new Error(`network ${network.name} does not speak JSON-RPC: it has no rpc()`);
    const id = ++ids;
    const ctx = new CallContext({ transport: NETWORK_RPC_TRANSPORT, network, credentials: { apiKey: undefined }, call: { method, params, id } }, deps.clock.now());
    ctx.method = network.methods.get(method)?.definition ?? unlistedMethod(method);
    ctx.candidates = deps.selector.select(ctx);
    const { reply, upstream } = await send(ctx, { body: encodeRequest(id, method, params) });
    const answer = decodeAnswer(reply.body as Uint8Array);
    if (answer.error !== undefined) throw new NodeAnswerError(method, upstream.name, answer.error);
    return answer.result;
  };
}
