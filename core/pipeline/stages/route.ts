import { networkUnavailable } from '../../upstream/unavailable.js';
import type { UpstreamSelector } from '../../contracts/selector.js';
import type { RequestContext } from '../../contracts/request-context.js';
import type { Upstream } from '../../contracts/upstream.js';
import { step } from '../stage-runner.js';
import { type Stage, type StageDependencies } from '../../contracts/stage.js';

/**
 * The candidates that may have reached the head the call needs (its method's `minHead`): those known to
 * be below it are left out, unless that leaves none (their answers then say why, in the node's words).
 */
function reachedMinHead(ctx: RequestContext, candidates: readonly Upstream[], selector: UpstreamSelector): readonly Upstream[] {
  const min = ctx.method?.minHead?.(ctx.params);
  if (min === undefined || selector.headOf === undefined) return candidates;
  const reached = candidates.filter((upstream) => {
    const head = selector.headOf!(upstream);
    return head === undefined || head >= min;
  });
  return reached.length === 0 ? candidates : reached;
}

/**
 * Asks the upstream selector which upstreams may serve the call, in order: the healthy primaries, then
 * the partner providers when the method and the key's plan are eligible for failover; a call whose method
 * needs a minimum head (`minHead`) skips the upstreams known to be below it. When there is none the call
 * ends here with `UPSTREAM_UNAVAILABLE` (HTTP 503, `Retry-After`), before any upstream is asked.
 * A call an earlier stage already answered (its `reply` is set) needs no upstream and is left alone.
 */
export function route(deps: StageDependencies): Stage {
  const { selector } = deps;
  return step((ctx) => {
    if (ctx.reply !== undefined) return;
    const candidates = selector.select(ctx);
    if (candidates.length === 0) throw networkUnavailable(ctx.network, selector);
    ctx.candidates = reachedMinHead(ctx, candidates, selector);
  });
}
