import { Errors, GatewayError, step, type StageDefinition, planOf } from '../../../core/plugin-api.js';
import { isIpfsNetwork } from '../family.js';
import type { ResolvedIpfsSettings } from '../settings.js';
import { CREDENTIALS_STAGE } from './credentials.js';

/** The stage's name; it runs right after the secret check. */
export const PLAN_ACCESS_STAGE = 'ipfsPlanAccess';

/** Refuses (HTTP 403) a file-storage call whose key's plan does not include the API. */
export function planAccessStage(settings: ResolvedIpfsSettings): StageDefinition {
  return {
    name: PLAN_ACCESS_STAGE,
    after: CREDENTIALS_STAGE,
    create: () =>
      step((ctx) => {
        if (!isIpfsNetwork(ctx.network)) return;
        const plan = planOf(ctx).name;
        if (!settings.plans.has(plan)) {
          throw new GatewayError(Errors.FORBIDDEN, { message: `the ${plan} plan does not include the file-storage API` });
        }
      }),
  };
}
