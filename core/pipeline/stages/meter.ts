import { GatewayError } from '../../errors/gateway-error.js';
import { Errors } from '../../errors/catalog.js';
import type { RequestContext } from '../../context.js';
import type { DebitResult } from '../../metering/credit-ledger.js';
import type { RateDecision } from '../../metering/rate-limiter.js';
import { step, type Stage, type StageDependencies } from '../stage.js';

/**
 * Charges the method's credits: first the key's throughput bucket (credits per second), then its daily
 * balance. The debit registers a refund as compensation, so a call the gateway fails later costs nothing.
 */
export function meter(deps: StageDependencies): Stage {
  const { ledger, limiter, clock } = deps;

  const charge = (ctx: RequestContext, credits: number, now: number): void | Promise<void> => {
    const result = ledger.debit(ctx.key!.id, credits, ctx.plan!.dailyCredits, new Date(now));
    const settle = (debit: DebitResult): void => {
      if (!debit.ok) {
        throw new GatewayError(Errors.CREDITS_EXHAUSTED, {
          message: `daily credit limit of ${ctx.plan!.dailyCredits} reached; resets at ${debit.resetsAt.toISOString()}`,
          data: { dailyCredits: ctx.plan!.dailyCredits, remaining: debit.remaining, cost: credits, resetsAt: debit.resetsAt.toISOString() },
        });
      }
      const receipt = debit.receipt;
      ctx.debit = receipt;
      ctx.compensations.push(() => ledger.refund(receipt));
    };
    if (result instanceof Promise) return result.then(settle);
    settle(result);
  };

  return step((ctx) => {
    const credits = ctx.method!.credits;
    if (credits <= 0) return;
    const plan = ctx.plan!;
    const now = clock.now();
    const rate = limiter.take(ctx.key!.id, credits, plan.creditsPerSecond, plan.creditsPerSecond, now);
    const check = (decision: RateDecision): void | Promise<void> => {
      if (!decision.ok) {
        const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
        throw new GatewayError(Errors.RATE_LIMITED, {
          message: `throughput limit of ${plan.creditsPerSecond} credits per second exceeded`,
          data: { creditsPerSecond: plan.creditsPerSecond, retryAfterSeconds: seconds },
          headers: { 'retry-after': String(seconds) },
        });
      }
      return charge(ctx, credits, now);
    };
    if (rate instanceof Promise) return rate.then(check);
    return check(rate);
  });
}
