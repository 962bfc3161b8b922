import type { RequestContext } from '../../types.js';
import { isPromise, step, type Stage, type StageDependencies } from '../stage.js';
import { createKeyCheck } from '../../keys/key-check.js';
import type { KeyAccess } from '../../plugin/runtime.js';

/**
 * Resolves the client's API key to its record and plan. Unknown, missing and revoked keys, and keys on a
 * plan the gateway does not serve, are refused alike (HTTP 401), so the answer does not reveal which keys
 * exist. The same check guards a transport's handshake (`GatewayRuntime.checkKey`).
 */
export function authenticate(deps: StageDependencies): Stage {
  const check = createKeyCheck(deps.keys, deps.config, deps.plans);
  const accept = (ctx: RequestContext, access: KeyAccess): void => {
    ctx.key = access.key;
    ctx.plan = access.plan;
  };
  return step((ctx) => {
    const access = check(ctx.credentials);
    if (isPromise(access)) return access.then((found) => accept(ctx, found));
    accept(ctx, access);
  });
}
