import { Errors, GatewayError, step, type Network, type RequestContext, type StageDefinition, methodOf, planOf } from '../../../core/plugin-api.js';
import type { SubscriptionMethod, SubscriptionSupport } from '../../../core/family-api.js';
import { networkUnavailable } from '../../../core/upstream-api.js';
import { SUBSCRIPTION_SESSION } from './subscription-session.js';
import type { SubscriptionService } from './subscription-service.js';
import { methodCredits } from './settings.js';
import { WS_TRANSPORT } from '../options.js';

/** A subscription method a call names: the family's support, the method pair, and which side of it the call is. */
interface SubscriptionCall {
  readonly support: SubscriptionSupport;
  readonly method: SubscriptionMethod;
  readonly opens: boolean;
}

/** The subscription methods of a network's families, by name. */
const callsByNetwork = new WeakMap<Network, ReadonlyMap<string, SubscriptionCall>>();

function subscriptionCallOf(ctx: RequestContext): SubscriptionCall | undefined {
  let calls = callsByNetwork.get(ctx.network);
  if (calls === undefined) {
    const map = new Map<string, SubscriptionCall>();
    for (const family of ctx.network.families) {
      const support = family.subscriptions;
      if (support === undefined) continue;
      for (const method of support.methods) {
        map.set(method.subscribe, { support, method, opens: true });
        map.set(method.unsubscribe, { support, method, opens: false });
      }
    }
    callsByNetwork.set(ctx.network, (calls = map));
  }
  return calls.size === 0 ? undefined : calls.get(ctx.call.method);
}

function replyWith(ctx: RequestContext, result: unknown): void {
  const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: ctx.call.id ?? null, result }));
  ctx.reply = { status: 200, headers: {}, body };
}

/**
 * The pipeline stages of subscriptions: `subscriptionCredits` (before `meter`) prices the subscription
 * methods per plan when the transport's settings say so; `subscriptions` (after `enforceLimits`, before
 * `route`) answers them on the caller's connection: it opens or joins the shared stream and replies
 * with the subscription id, so no upstream call is made for them. A subscribe refused (caps, no node
 * able to serve) fails the call, and its credits are refunded.
 */
export function subscriptionStages(service: SubscriptionService): StageDefinition[] {
  return [
    {
      name: 'subscriptionCredits',
      before: 'meter',
      // Subscription methods are offered on WebSocket connections only (their definitions say so).
      transports: [WS_TRANSPORT],
      create: () => step((ctx) => {
        if (subscriptionCallOf(ctx) === undefined) return;
        ctx.credits = methodCredits(service.settings, planOf(ctx).name, ctx.call.method, ctx.credits ?? methodOf(ctx).credits);
      }),
    },
    {
      name: 'subscriptions',
      after: 'enforceLimits',
      transports: [WS_TRANSPORT],
      create: (deps) => {
        service.bind(deps.selector, deps.logger);
        return step(async (ctx) => {
          const call = subscriptionCallOf(ctx);
          if (call === undefined) return;
          const session = ctx.meta.connection?.get(SUBSCRIPTION_SESSION);
          if (session === undefined) {
            throw new GatewayError(Errors.METHOD_NOT_FOUND, { message: `${ctx.call.method} needs a WebSocket connection (subscriptions are not offered over ${ctx.transport})` });
          }
          if (!call.opens) return replyWith(ctx, session.unsubscribe(call.support, (ctx.params as readonly unknown[])[0]));
          const candidates = deps.selector.select(ctx);
          if (candidates.length === 0) throw networkUnavailable(ctx.network, deps.selector);
          // Partners are among the candidates only when the method and the key's plan allow them.
          const eligible = candidates.some((u) => u.settings.role === 'partner');
          replyWith(ctx, await session.subscribe(ctx, call.support, call.method, call.support.request(ctx.params, call.method), eligible));
        });
      },
    },
  ];
}
