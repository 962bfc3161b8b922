import type { Network } from '../../contracts/request-context.js';
import { step } from '../stage-runner.js';
import { type Stage } from '../../contracts/stage.js';
import { methodOf } from '../../context/context-access.js';

/**
 * Runs the method's `limits` hook: it may refuse the call (a `GatewayError`) or rewrite its params (a
 * capped value), in which case the call is re-encoded instead of forwarding the client's bytes.
 */
export function enforceLimits(): Stage {
  return step((ctx) => {
    const limits = methodOf(ctx).limits;
    if (limits === undefined) return;
    const apply = (rewritten: unknown): void => {
      if (rewritten !== undefined) {
        ctx.params = rewritten;
        ctx.rewritten = true;
      }
    };
    const result = limits({ params: ctx.params, ctx, network: ctx.network as Network });
    if (result instanceof Promise) return result.then(apply);
    apply(result);
  });
}
