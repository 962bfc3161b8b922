import type { RequestContext } from '../contracts/request-context.js';
import type { Upstream, UpstreamReply } from '../contracts/upstream.js';
import type { Logger } from 'pino';
import { decodeAnswer } from '../jsonrpc/decode.js';
import { encodeRequest } from '../jsonrpc/encode.js';
import { requestUpstream } from '../context/request-upstream.js';

/** Error answers are small; a larger body is a result and is never parsed here. */
const MAX_ERROR_BODY = 4096;

/**
 * The call's answer after its method's `onNodeError` hook read a node error: the node's reply itself,
 * or, when the hook found the error to mean success, a reply carrying the hook's result under the id
 * the node answered with. Methods without the hook, and answers that are not errors, cost nothing.
 */
export async function settleNodeError(ctx: RequestContext, upstream: Upstream, reply: UpstreamReply, logger: Logger): Promise<UpstreamReply> {
  const hook = ctx.method?.onNodeError;
  const body = reply.body;
  if (hook === undefined || !(body instanceof Uint8Array) || body.byteLength > MAX_ERROR_BODY) return reply;
  let parsed: { id?: unknown; error?: unknown };
  try {
    parsed = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8')) as typeof parsed;
  } catch {
    return reply;
  }
  if (typeof parsed !== 'object' || parsed === null || parsed.error === undefined || parsed.error === null) return reply;
  const answer = decodeAnswer(body);
  if (answer.error === undefined) return reply;
  let asks = 0;
  const ask = async (method: string, params: readonly unknown[]): Promise<unknown> => {
    const id = `${ctx.id}:${++asks}`;
    const sent = await requestUpstream(ctx, upstream, { body: encodeRequest(id, method, params) }, upstream.settings.timeoutMs, ctx.cancelSignal);
    const read = decodeAnswer(sent.body as Uint8Array);
    if (read.error !== undefined) throw new Error(`${method} failed on ${upstream.name}: ${read.error.message}`);
    return read.result;
  };
  try {
    const settled = await hook(answer.error, { params: ctx.params, ctx, upstream, ask });
    if (settled === undefined) return reply;
    logger.info({ call: ctx.id, network: ctx.network.name, upstream: upstream.name, error: answer.error.message }, 'node error answered as success');
    const bytes = Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(parsed.id ?? null)},"result":${JSON.stringify(settled.result ?? null)}}`);
    return { status: 200, headers: reply.headers, body: bytes };
  } catch (error) {
    logger.debug({ call: ctx.id, network: ctx.network.name, upstream: upstream.name, reason: (error as Error).message }, 'node error left as it is');
    return reply;
  }
}
