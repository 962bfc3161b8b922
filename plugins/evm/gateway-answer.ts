/**
 * Answers a call from the gateway itself: a JSON-RPC envelope with the client's id, set as the call's
 * reply before `route`, so no upstream is asked for it (the filters, a split `eth_getLogs`).
 *
 * @module
 */
import type { GatewayError, RequestContext } from '../../core/plugin-api.js';
import type { JsonRpcErrorObject } from '../../core/family-api.js';

/** Sets `result` as the call's answer. */
export function answerWith(ctx: RequestContext, result: unknown): void {
  ctx.reply = { status: 200, headers: { 'content-type': 'application/json' }, body: Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(ctx.call.id ?? null)},"result":${JSON.stringify(result)}}`) };
}

/** Sets a node's error answer as the call's answer: it is the node's word on the call, charged like any answer. */
export function answerWithNodeError(ctx: RequestContext, error: JsonRpcErrorObject): void {
  ctx.reply = { status: 200, headers: { 'content-type': 'application/json' }, body: Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(ctx.call.id ?? null)},"error":${JSON.stringify(error)}}`) };
}

/**
 * Sets a gateway error as the call's answer rather than failing the call with it: the answer the client
 * gets is the same envelope (the error's code, message and data; its HTTP status must be 200), but the
 * call counts as answered, so its charge stands. For an error that ends work the nodes already did
 * for the call (a split `eth_getLogs` that reached its result or time limit).
 */
export function answerWithChargedError(ctx: RequestContext, error: GatewayError): void {
  answerWithNodeError(ctx, error.toJSON());
}
