import type { RequestContext } from '../contracts/request-context.js';
import type { Upstream, UpstreamReply, UpstreamRequest } from '../contracts/upstream.js';
import type { CancelSignal } from '../contracts/cancel-signal.js';

/**
 * Sends one upstream request of `ctx`: through the channel its transport offers (`ctx.meta.channel`,
 * an `UpstreamChannel`) when that channel carries it now, else by the upstream's own request. Rejects
 * like {@link Upstream.request}.
 */
export function requestUpstream(ctx: RequestContext, upstream: Upstream, request: UpstreamRequest, timeoutMs: number, signal: CancelSignal): Promise<UpstreamReply> {
  const channel = ctx.meta.channel;
  if (channel !== undefined) {
    const sent = channel.request(upstream, request, timeoutMs, signal);
    if (sent !== undefined) return sent;
  }
  return upstream.request(request, timeoutMs, signal);
}
