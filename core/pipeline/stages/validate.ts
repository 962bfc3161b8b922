import { GatewayError } from '../../leaves/errors/gateway-error.js';
import { Errors } from '../../leaves/errors/catalog.js';
import { step, type Stage } from '../../model/stage.js';

const NO_PARAMS: readonly unknown[] = Object.freeze([]);

/**
 * Finds the called method on the addressed network and checks its params against the method's schema.
 * A missing `params` member is validated as `[]`.
 */
export function validate(): Stage {
  return step((ctx) => {
    const method = ctx.network.methods.get(ctx.call.method);
    if (method === undefined || (method.definition.transports !== undefined && !method.definition.transports.includes(ctx.transport))) {
      throw new GatewayError(Errors.METHOD_NOT_FOUND, { message: `the method ${ctx.call.method} does not exist/is not available` });
    }
    const params = ctx.call.params ?? NO_PARAMS;
    const problem = method.validate(params);
    if (problem !== undefined) throw new GatewayError(Errors.INVALID_PARAMS, { message: problem });
    ctx.method = method.definition;
    ctx.params = params;
  });
}
