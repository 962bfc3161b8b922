import { GatewayError } from '../../errors/gateway-error.js';
import { Errors } from '../../errors/catalog.js';
import type { RequestContext } from '../../context.js';
import type { Network } from '../../network.js';
import { resolveFailoverSettings, type FailoverSettings } from '../../upstream/failover-settings.js';
import { networkUnavailable } from '../../upstream/unavailable.js';
import { UpstreamFailure } from '../../upstream/upstream-failure.js';
import { step, type Stage, type StageDependencies } from '../stage.js';

/**
 * Sends the call to the route's upstreams in order until one answers.
 *
 * - A failure to answer (connect error, reset, timeout, HTTP 5xx or 429, a provider's capacity error) moves
 *   on to the next upstream, within `failover.maxAttempts` primaries and the `failover.deadlineMs` of the
 *   whole call: no attempt starts after the deadline, and an attempt's timeout is cut to what is left.
 *   Partners, present only for eligible calls, come after the primaries.
 * - A node's own answer, error or not (a revert, invalid params, an empty `[]` or `null`), ends the loop:
 *   it is the call's answer, never a reason to retry.
 * - A call that is not idempotent (`eth_sendRawTransaction`) is never sent again once an upstream may have
 *   received it; a refusal before the node ran it (connect error, HTTP 429, a capacity error) may move on.
 * - A method's own deadline (`eth_getLogs`: 10 s) ends the call with the method's error: another node
 *   would not do better.
 * - The selector learns every outcome (breakers, counters); a client that went away is no upstream's fault.
 *
 * When nothing answered the call fails with `UPSTREAM_UNAVAILABLE` (or `UPSTREAM_TIMEOUT` when the last
 * attempt timed out), and the pipeline's compensation refunds its credits. Retries cost nothing extra.
 */
export function dispatch(deps: StageDependencies): Stage {
  const { selector, logger, config } = deps;
  const policies = new WeakMap<Network, FailoverSettings>();
  const policyOf = (network: Network): FailoverSettings => {
    let policy = policies.get(network);
    if (policy === undefined) {
      policy = resolveFailoverSettings(config, network.config);
      policies.set(network, policy);
    }
    return policy;
  };

  const attempt = async (ctx: RequestContext): Promise<void> => {
    const method = ctx.method!;
    const network = ctx.network;
    const protocol = network.protocol;
    const request = protocol.encode(ctx);
    const idempotent = method.idempotent !== false;
    const policy = policyOf(network);
    const candidates = ctx.candidates!;
    const signal = ctx.signal;
    const startedAt = performance.now();
    const deadline = startedAt + policy.deadlineMs;
    let primaries = 0;
    let last: UpstreamFailure | undefined;
    let resendRefused = false;
    for (let i = 0; i < candidates.length; i++) {
      const upstream = candidates[i]!;
      if (signal.aborted) break;
      const primary = upstream.settings.role === 'primary';
      if (primary && primaries >= policy.maxAttempts) continue;
      const now = i === 0 ? startedAt : performance.now();
      const remaining = deadline - now;
      if (remaining <= 0) break;
      if (selector.admit !== undefined && !selector.admit(upstream, ctx)) continue;
      const own = method.timeoutMs ?? request.timeoutMs ?? upstream.settings.timeoutMs;
      const cut = remaining < own;
      if (primary) primaries++;
      ctx.attempts++;
      let failure: UpstreamFailure | undefined;
      try {
        const reply = await upstream.request(request, cut ? Math.max(1, Math.floor(remaining)) : own, signal);
        failure = protocol.inspect(reply, ctx);
        if (failure === undefined) {
          selector.onSuccess?.(upstream, performance.now() - now);
          ctx.reply = reply;
          ctx.servedBy = upstream;
          return;
        }
      } catch (error) {
        failure = error instanceof UpstreamFailure ? error : new UpstreamFailure('reset', String(error), { maybeReceived: true, cause: error });
      }
      last = failure;
      // The client went away: nothing to answer, and no upstream to blame.
      if (signal.aborted) break;
      if (failure.kind === 'timeout' && !cut && method.timeoutMs !== undefined && method.onTimeout !== undefined) {
        // The method's own deadline ran out: the query is too heavy, another node would not do better.
        throw method.onTimeout();
      }
      // A timeout cut short by the call's deadline says nothing about the upstream.
      if (!(cut && failure.kind === 'timeout')) selector.onFailure?.(upstream, failure);
      logger.warn({ call: ctx.id, network: network.name, upstream: upstream.name, failure: failure.kind, reason: failure.message }, 'upstream attempt failed');
      if (failure.maybeReceived && !idempotent) {
        resendRefused = true;
        break;
      }
    }
    if (signal.aborted) throw new GatewayError(Errors.UPSTREAM_UNAVAILABLE, { message: 'the client went away', cause: last });
    if (last?.kind === 'timeout') {
      throw new GatewayError(Errors.UPSTREAM_TIMEOUT, { message: `no upstream of ${network.name} answered in time`, cause: last });
    }
    if (resendRefused) {
      throw networkUnavailable(
        network,
        selector,
        `the node failed after it may have received the call; ${method.name} is not sent twice: check its effect before sending it again`,
        last,
      );
    }
    throw networkUnavailable(network, selector, undefined, last);
  };

  return step(attempt);
}
