import { networkUnavailable } from '../../upstream/unavailable.js';
import { step, type Stage, type StageDependencies } from '../stage.js';

/**
 * Asks the upstream selector which upstreams may serve the call, in order: the healthy primaries, then
 * the partner providers when the method and the key's plan are eligible for failover. When there is none
 * the call ends here with `UPSTREAM_UNAVAILABLE` (HTTP 503, `Retry-After`), before any upstream is asked.
 * A call an earlier stage already answered (its `reply` is set) needs no upstream and is left alone.
 */
export function route(deps: StageDependencies): Stage {
  const { selector } = deps;
  return step((ctx) => {
    if (ctx.reply !== undefined) return;
    const candidates = selector.select(ctx);
    if (candidates.length === 0) throw networkUnavailable(ctx.network, selector);
    ctx.candidates = candidates;
  });
}
