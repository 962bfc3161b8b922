import type { RequestContext } from '../../contracts/request-context.js';
import { isPromise } from '../../util/maybe-promise.js';
import { step } from '../stage-runner.js';
import { type Stage, type StageDependencies } from '../../contracts/stage.js';
import { createKeyAdmission, createKeyCheck } from '../../keys/key-check.js';
import type { KeyAccess } from '../../contracts/runtime.js';

/**
 * Resolves the client's API key to its record and plan. Unknown, missing and revoked keys, and keys on a
 * plan the gateway does not serve, are refused alike (HTTP 401), so the answer does not reveal which keys
 * exist. The same check guards a transport's handshake (`GatewayRuntime.checkKey`).
 *
 * A stage before this one that had to look the key up itself (the file-storage API's, which makes an
 * unknown key cost what a wrong secret costs) leaves the record it found on `ctx.key`: it is admitted
 * (live, on a plan the gateway serves) without a second lookup, so each call reads the key store once.
 */
export function authenticate(deps: StageDependencies): Stage {
  const check = createKeyCheck(deps.keys, deps.config, deps.plans);
  const admit = createKeyAdmission(deps.config, deps.plans);
  const accept = (ctx: RequestContext, access: KeyAccess): void => {
    ctx.key = access.key;
    ctx.plan = access.plan;
  };
  return step((ctx) => {
    const found = ctx.key;
    if (found !== undefined) return accept(ctx, admit(found));
    const access = check(ctx.credentials);
    if (isPromise(access)) return access.then((found) => accept(ctx, found));
    accept(ctx, access);
  });
}
