import { GatewayError } from '../../errors/gateway-error.js';
import { Errors } from '../../errors/catalog.js';
import { step } from '../stage-runner.js';
import { type Stage } from '../../contracts/stage.js';
import { forwards, protectedNamespaces, type ProtectedNamespaces } from '../../config/unknown-methods.js';
import type { MethodDefinition, Network, NetworkMethod, RequestContext } from '../../contracts/request-context.js';

const NO_PARAMS: readonly unknown[] = Object.freeze([]);

/**
 * A method no family of the network defines, under the network's `forward` policy: any params, the
 * policy's price, sent to primaries only (no plan makes an unknown call eligible for a partner) and never
 * resent once a node may have received it (nothing says it is safe to run twice).
 */
function forwarded(name: string, credits: number): NetworkMethod {
  const definition: MethodDefinition = { name, params: {}, credits, failover: false, idempotent: false };
  return { definition, validate: () => undefined };
}

// What each network's families protect, worked out once per network (a reload builds new networks).
const marksOf = new WeakMap<Network, ProtectedNamespaces>();

function marks(network: Network): ProtectedNamespaces {
  let found = marksOf.get(network);
  if (found === undefined) marksOf.set(network, (found = protectedNamespaces(network.families)));
  return found;
}

/**
 * The method the call names, or the network's policy for a method none of its families defines: only
 * names the policy lists are forwarded (never a node's administration namespace unless named one by one,
 * never a namespace the families switched off); any other name is refused before a node is asked.
 */
function methodFor(ctx: RequestContext): NetworkMethod {
  const method = ctx.network.methods.get(ctx.call.method);
  if (method !== undefined && (method.definition.transports === undefined || method.definition.transports.includes(ctx.transport))) return method;
  const policy = ctx.network.config.unknownMethods;
  if (method === undefined && policy !== undefined && forwards(policy, ctx.call.method, marks(ctx.network))) return forwarded(ctx.call.method, policy.credits ?? 0);
  throw new GatewayError(Errors.METHOD_NOT_FOUND, { message: `the method ${ctx.call.method} does not exist/is not available` });
}

/**
 * Finds the called method on the addressed network and checks its params against the method's schema.
 * A missing `params` member is validated as `[]`. Before anything is charged, it also refuses a method
 * its family refuses on purpose (`METHOD_NOT_SUPPORTED`, with the family's reason) and a method the
 * key's plan is not eligible for (`FORBIDDEN`). A method no family defines gets `METHOD_NOT_FOUND`, or
 * is forwarded at a set price when the network's `unknownMethods` policy lists it.
 */
export function validate(): Stage {
  return step((ctx) => {
    const method = methodFor(ctx);
    const definition = method.definition;
    if (definition.refused !== undefined) throw new GatewayError(Errors.METHOD_NOT_SUPPORTED, { message: `${definition.name}: ${definition.refused}` });
    if (definition.plans !== undefined && !definition.plans.includes(ctx.plan?.name ?? '')) {
      throw new GatewayError(Errors.FORBIDDEN, {
        message: `${definition.name} is not available on the ${ctx.plan?.name ?? 'key\'s'} plan (plans: ${definition.plans.join(', ')})`,
        data: { method: definition.name, plans: [...definition.plans] },
      });
    }
    const params = ctx.call.params ?? NO_PARAMS;
    const problem = method.validate(params);
    if (problem !== undefined) throw new GatewayError(Errors.INVALID_PARAMS, { message: problem });
    ctx.method = definition;
    ctx.params = params;
  });
}
