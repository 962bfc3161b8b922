import { GatewayError } from '../../errors/gateway-error.js';
import { Errors } from '../../errors/catalog.js';
import { step, type Stage, type StageDependencies } from '../stage.js';

/** Asks the upstream selector which upstreams may serve the call, in order. */
export function route(deps: StageDependencies): Stage {
  return step((ctx) => {
    const candidates = deps.selector.select(ctx);
    if (candidates.length === 0) {
      throw new GatewayError(Errors.UPSTREAM_UNAVAILABLE, {
        message: `network ${ctx.network.name} is unavailable`,
        headers: { 'retry-after': '1' },
      });
    }
    ctx.candidates = candidates;
  });
}
