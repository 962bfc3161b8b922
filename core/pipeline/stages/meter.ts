import { GatewayError } from '../../errors/gateway-error.js';
import { Errors } from '../../errors/catalog.js';
import type { RequestContext } from '../../contracts/request-context.js';
import type { DebitResult } from '../../contracts/credit-ledger.js';
import type { RateDecision } from '../../contracts/rate-limiter.js';
import { isPromise } from '../../util/maybe-promise.js';
import { step } from '../stage-runner.js';
import { type Stage, type StageDependencies } from '../../contracts/stage.js';
import { keyOf, methodOf, planOf } from '../../context/context-access.js';

/**
 * Charges the call's credits (the method's, unless an earlier stage set {@link RequestContext.credits}): first the key's throughput bucket (credits per second), then its daily
 * balance. The debit registers a refund as compensation, so a call the gateway fails later costs nothing.
 */
export function meter(deps: StageDependencies): Stage {
  const { ledger, limiter, clock } = deps;

  function settle(ctx: RequestContext, credits: number, debit: DebitResult): void {
    if (!debit.ok) {
      const plan = planOf(ctx);
      throw new GatewayError(Errors.CREDITS_EXHAUSTED, {
        message: `daily credit limit of ${plan.dailyCredits} reached; resets at ${debit.resetsAt.toISOString()}`,
        data: { dailyCredits: plan.dailyCredits, remaining: debit.remaining, cost: credits, resetsAt: debit.resetsAt.toISOString() },
      });
    }
    const receipt = debit.receipt;
    ctx.debit = receipt;
    ctx.compensations.push(() => ledger.refund(receipt));
  }

  function charge(ctx: RequestContext, credits: number, now: number, decision: RateDecision): void | Promise<void> {
    if (!decision.ok) {
      const perSecond = planOf(ctx).creditsPerSecond;
      const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
      throw new GatewayError(Errors.RATE_LIMITED, {
        message: `throughput limit of ${perSecond} credits per second exceeded`,
        data: { creditsPerSecond: perSecond, retryAfterSeconds: seconds },
        headers: { 'retry-after': String(seconds) },
      });
    }
    const result = ledger.debit(keyOf(ctx).id, credits, planOf(ctx).dailyCredits, new Date(now));
    if (isPromise(result)) return result.then((debit) => settle(ctx, credits, debit));
    settle(ctx, credits, result);
  }

  return step((ctx) => {
    const credits = ctx.credits ?? methodOf(ctx).credits;
    if (credits <= 0) return;
    const perSecond = planOf(ctx).creditsPerSecond;
    const now = clock.now();
    const rate = limiter.take(keyOf(ctx).id, credits, perSecond, perSecond, now);
    if (isPromise(rate)) return rate.then((decision) => charge(ctx, credits, now, decision));
    return charge(ctx, credits, now, rate);
  });
}
