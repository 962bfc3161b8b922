import { GatewayError } from '../../errors/gateway-error.js';
import { Errors } from '../../errors/catalog.js';
import type { RequestContext } from '../../context.js';
import { UpstreamFailure } from '../../upstream/upstream-failure.js';
import { step, type Stage, type StageDependencies } from '../stage.js';

/**
 * Sends the call to the route's upstreams in order until one answers. A failure to answer (connect
 * error, reset, timeout, HTTP 5xx or 429) moves on to the next upstream, except that a call that is not
 * idempotent is never sent again once an upstream may have received it. A node's own answer, error or
 * not, ends the loop.
 */
export function dispatch(deps: StageDependencies): Stage {
  const { selector, logger } = deps;

  const attempt = async (ctx: RequestContext): Promise<void> => {
    const method = ctx.method!;
    const request = ctx.network.protocol.encode(ctx);
    const idempotent = method.idempotent !== false;
    let last: UpstreamFailure | undefined;
    for (const upstream of ctx.candidates!) {
      if (ctx.signal.aborted) break;
      ctx.attempts++;
      const started = performance.now();
      let failure: UpstreamFailure | undefined;
      try {
        const reply = await upstream.request({ ...request, timeoutMs: method.timeoutMs ?? request.timeoutMs, signal: ctx.signal });
        failure = ctx.network.protocol.inspect(reply, ctx);
        if (failure === undefined) {
          selector.onSuccess?.(upstream, performance.now() - started);
          ctx.reply = reply;
          ctx.servedBy = upstream;
          return;
        }
      } catch (error) {
        failure = error instanceof UpstreamFailure ? error : new UpstreamFailure('reset', String(error), { maybeReceived: true, cause: error });
      }
      last = failure;
      if (failure.kind === 'timeout' && method.timeoutMs !== undefined && method.onTimeout !== undefined) {
        // The method's own deadline ran out: the query is too heavy, another node would not do better.
        throw method.onTimeout();
      }
      selector.onFailure?.(upstream, failure);
      logger.warn({ call: ctx.id, network: ctx.network.name, upstream: upstream.name, failure: failure.kind, reason: failure.message }, 'upstream attempt failed');
      if (failure.maybeReceived && !idempotent) break;
    }
    if (last?.kind === 'timeout') {
      throw new GatewayError(Errors.UPSTREAM_TIMEOUT, { message: `no upstream of ${ctx.network.name} answered in time` });
    }
    throw new GatewayError(Errors.UPSTREAM_UNAVAILABLE, {
      message: `network ${ctx.network.name} is unavailable`,
      headers: { 'retry-after': '1' },
      cause: last,
    });
  };

  return step(attempt);
}
