import { GatewayError } from '../../errors/gateway-error.js';
import { Errors } from '../../errors/catalog.js';
import type { RequestContext } from '../../contracts/request-context.js';
import { MeteringToken, type Charge } from '../../contracts/metering.js';
import { TopUpsToken, type TopUpOffer, type TopUpOutcome, type TopUpRequest } from '../../contracts/top-ups.js';
import { isPromise } from '../../util/maybe-promise.js';
import { step } from '../stage-runner.js';
import { type Stage, type StageDependencies } from '../../contracts/stage.js';
import { keyOf, methodOf, planOf } from '../../context/context-access.js';

/**
 * Charges the call's credits (the method's, unless an earlier stage set {@link RequestContext.credits})
 * through the gateway's `Metering`, in one operation: the key's throughput bucket (credits per second),
 * then its daily balance. The charge's refund is registered as compensation, so a call the gateway
 * fails later costs nothing. A call the balance cannot pay for is refused with `CREDITS_EXHAUSTED`,
 * carrying the headers and `error.data` entries of the key's top-up offer when the gateway has a
 * `TopUps` and it offers one. A top-up the request carries (`TopUps.take`) is taken first, right before
 * the charge: after every other stage, so a call refused before `meter` spends none.
 */
export function meter(deps: StageDependencies): Stage {
  const { clock } = deps;
  const metering = deps.container.resolve(MeteringToken);
  const topUps = deps.container.isRegistered(TopUpsToken, true) ? deps.container.resolve(TopUpsToken) : undefined;

  function requestOf(ctx: RequestContext): TopUpRequest {
    return { key: keyOf(ctx), plan: planOf(ctx), network: ctx.network.name, transport: ctx.transport, headers: ctx.meta.headers };
  }

  function offerOf(ctx: RequestContext): TopUpOffer | undefined {
    return topUps?.offer(requestOf(ctx));
  }

  function charge(ctx: RequestContext, credits: number): void | Promise<void> {
    const charged = metering.charge(keyOf(ctx).id, credits, planOf(ctx), clock.now());
    if (isPromise(charged)) return charged.then((result) => settle(ctx, credits, result));
    settle(ctx, credits, charged);
  }

  function afterTopUp(ctx: RequestContext, credits: number, outcome: TopUpOutcome): void | Promise<void> {
    if (!outcome.ok) throw outcome.error;
    if (outcome.headers !== undefined) ctx.replyHeaders = { ...ctx.replyHeaders, ...outcome.headers };
    return charge(ctx, credits);
  }

  function settle(ctx: RequestContext, credits: number, charge: Charge): void {
    if (charge.ok) {
      ctx.debit = charge.receipt;
      ctx.compensations.push(() => charge.refund());
      return;
    }
    const plan = planOf(ctx);
    if (charge.code === 'RATE_LIMITED') {
      const seconds = Math.max(1, Math.ceil(charge.retryAfterMs / 1000));
      throw new GatewayError(Errors.RATE_LIMITED, {
        message: `throughput limit of ${plan.creditsPerSecond} credits per second exceeded`,
        data: { creditsPerSecond: plan.creditsPerSecond, retryAfterSeconds: seconds },
        headers: { 'retry-after': String(seconds) },
      });
    }
    const offer = offerOf(ctx);
    throw new GatewayError(Errors.CREDITS_EXHAUSTED, {
      message: `daily credit limit of ${plan.dailyCredits} reached; resets at ${charge.resetsAt.toISOString()}`,
      data: { dailyCredits: plan.dailyCredits, remaining: charge.remaining, paidRemaining: charge.paidRemaining, cost: credits, resetsAt: charge.resetsAt.toISOString(), ...offer?.data },
      ...(offer?.headers === undefined ? {} : { headers: { ...offer.headers } }),
    });
  }

  return step((ctx) => {
    const credits = ctx.credits ?? methodOf(ctx).credits;
    if (credits <= 0) return;
    const taking = topUps?.take?.(requestOf(ctx));
    if (taking !== undefined) return taking.then((outcome) => afterTopUp(ctx, credits, outcome));
    return charge(ctx, credits);
  });
}
