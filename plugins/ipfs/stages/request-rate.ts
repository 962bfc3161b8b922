import { Errors, GatewayError, step, type StageDefinition, keyOf, planOf } from '../../../core/plugin-api.js';
import { type RateDecision } from '../../../core/store-api.js';
import { ipfsCommand } from '../commands.js';
import { isIpfsNetwork } from '../family.js';
import { psaMethodKind } from '../pinning-service/methods.js';
import type { ResolvedIpfsSettings } from '../settings.js';

/** The stage's name; it runs after `enforceLimits` (so a malformed call is not counted) and before `route`. */
export const REQUEST_RATE_STAGE = 'ipfsRequestRate';

/**
 * The file-storage API's per-key request-rate limits: one token bucket for reads and one for writes,
 * sized by the key's plan (`plugins.ipfs.plans`). Over the limit: HTTP 429 with `Retry-After`.
 */
export function requestRateStage(settings: ResolvedIpfsSettings): StageDefinition {
  return {
    name: REQUEST_RATE_STAGE,
    after: 'enforceLimits',
    create({ limiter, clock }) {
      return step((ctx) => {
        if (!isIpfsNetwork(ctx.network)) return;
        const limits = settings.plans.get(planOf(ctx).name);
        const kind = ipfsCommand(ctx.call.method)?.kind ?? psaMethodKind(ctx.call.method) ?? 'read';
        if (limits === undefined) return;
        const perSecond = kind === 'write' ? limits.writesPerSecond : limits.readsPerSecond;
        const burst = kind === 'write' ? limits.writeBurst : limits.readBurst;
        const decide = (decision: RateDecision): void => {
          if (decision.ok) return;
          const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
          throw new GatewayError(Errors.RATE_LIMITED, {
            message: `request-rate limit of ${perSecond} ${kind}s per second exceeded`,
            data: { kind, perSecond, retryAfterSeconds: seconds },
            headers: { 'retry-after': String(seconds) },
          });
        };
        const decision = limiter.take(`ipfs-${kind}:${keyOf(ctx).id}`, 1, perSecond, burst, clock.now());
        if (decision instanceof Promise) return decision.then(decide);
        decide(decision);
      });
    },
  };
}
