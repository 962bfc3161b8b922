import { Errors, GatewayError, step, type Network, type RequestContext, type StageDefinition, type SubscriptionSupport, methodOf, planOf } from '../../../core/plugin-api.js';
import { networkUnavailable } from '../../../core/upstream-api.js';
import { SUBSCRIPTION_SESSION } from './subscription-session.js';
import type { SubscriptionService } from './subscription-service.js';
import { methodCredits } from './settings.js';
import { WS_TRANSPORT } from '../options.js';

/** The subscription support of a network's families, by the method names it answers. */
const supportByNetwork = new WeakMap<Network, ReadonlyMap<string, SubscriptionSupport>>();

function supportFor(ctx: RequestContext): SubscriptionSupport | undefined {
  let methods = supportByNetwork.get(ctx.network);
  if (methods === undefined) {
    const map = new Map<string, SubscriptionSupport>();
    for (const family of ctx.network.families) {
      const support = family.subscriptions;
      if (support === undefined) continue;
      map.set(support.subscribe, support);
      map.set(support.unsubscribe, support);
    }
    supportByNetwork.set(ctx.network, (methods = map));
  }
  return methods.size === 0 ? undefined : methods.get(ctx.call.method);
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
        if (supportFor(ctx) === undefined) return;
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
          const support = supportFor(ctx);
          if (support === undefined) return;
          const session = ctx.meta.connection?.get(SUBSCRIPTION_SESSION);
          if (session === undefined) {
            throw new GatewayError(Errors.METHOD_NOT_FOUND, { message: `${ctx.call.method} needs a WebSocket connection (subscriptions are not offered over ${ctx.transport})` });
          }
          if (ctx.call.method === support.unsubscribe) return replyWith(ctx, session.unsubscribe((ctx.params as [string])[0]));
          const candidates = deps.selector.select(ctx);
          if (candidates.length === 0) throw networkUnavailable(ctx.network, deps.selector);
          // Partners are among the candidates only when the method and the key's plan allow them.
          const eligible = candidates.some((u) => u.settings.role === 'partner');
          replyWith(ctx, await session.subscribe(ctx, support, support.request(ctx.params), eligible));
        });
      },
    },
  ];
}
