import { GatewayError } from '../../errors/gateway-error.js';
import { Errors } from '../../errors/catalog.js';
import type { RequestContext } from '../../context.js';
import type { ApiKeyRecord, Plan } from '../../metering/keys.js';
import { isPromise, step, type Stage, type StageDependencies } from '../stage.js';

/**
 * Resolves the client's API key to its record and plan. Unknown, missing and revoked keys are refused
 * alike (HTTP 401), so the answer does not reveal which keys exist.
 */
export function authenticate(deps: StageDependencies): Stage {
  const plans = new Map<string, Plan>(Object.entries(deps.config.plans).map(([name, plan]) => [name, { name, ...plan }]));

  function accept(ctx: RequestContext, record: ApiKeyRecord | undefined): void {
    const plan = record === undefined ? undefined : plans.get(record.plan);
    if (record === undefined || record.revoked === true || plan === undefined) throw new GatewayError(Errors.UNAUTHORIZED);
    ctx.key = record;
    ctx.plan = plan;
  }

  return step((ctx) => {
    const apiKey = ctx.credentials.apiKey;
    if (apiKey === undefined || apiKey === '') throw new GatewayError(Errors.UNAUTHORIZED, { message: 'API key required in the URL: /v3/<API_KEY>' });
    const found = deps.keys.find(apiKey);
    if (isPromise(found)) return found.then((record) => accept(ctx, record));
    accept(ctx, found);
  });
}
