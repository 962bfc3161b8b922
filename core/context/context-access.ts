import { GatewayError } from '../errors/gateway-error.js';
import { Errors } from '../errors/catalog.js';
import type { ApiKeyRecord, Plan } from '../contracts/keys.js';
import type { MethodDefinition, RequestContext } from '../contracts/request-context.js';
import type { Upstream, UpstreamReply } from '../contracts/upstream.js';

// Typed reads of the context fields a core stage guarantees to later stages. A stage placed before the
// one that sets a field gets a coded error naming both, not a TypeError on `undefined`.

function missing(field: string, stage: string): GatewayError {
  return new GatewayError(Errors.STAGE_CONTRACT_VIOLATED, { message: `ctx.${field} was read before the ${stage} stage set it` });
}

/** The call's key record, set by `authenticate`. @throws GatewayError `STAGE_CONTRACT_VIOLATED` when read before it. */
export function keyOf(ctx: RequestContext): ApiKeyRecord {
  const key = ctx.key;
  if (key === undefined) throw missing('key', 'authenticate');
  return key;
}

/** The key's plan, set by `authenticate`. @throws GatewayError `STAGE_CONTRACT_VIOLATED` when read before it. */
export function planOf(ctx: RequestContext): Plan {
  const plan = ctx.plan;
  if (plan === undefined) throw missing('plan', 'authenticate');
  return plan;
}

/** The called method's definition, set by `validate`. @throws GatewayError `STAGE_CONTRACT_VIOLATED` when read before it. */
export function methodOf(ctx: RequestContext): MethodDefinition {
  const method = ctx.method;
  if (method === undefined) throw missing('method', 'validate');
  return method;
}

/** The upstreams to try, in order, set by `route`. @throws GatewayError `STAGE_CONTRACT_VIOLATED` when read before it. */
export function candidatesOf(ctx: RequestContext): readonly Upstream[] {
  const candidates = ctx.candidates;
  if (candidates === undefined) throw missing('candidates', 'route');
  return candidates;
}

/** The upstream's answer, set by `dispatch` (or a stage that answered first). @throws GatewayError `STAGE_CONTRACT_VIOLATED` when read before it. */
export function replyOf(ctx: RequestContext): UpstreamReply {
  const reply = ctx.reply;
  if (reply === undefined) throw missing('reply', 'dispatch');
  return reply;
}

/** The upstream that answered, set by `dispatch`. @throws GatewayError `STAGE_CONTRACT_VIOLATED` when read before it. */
export function servedByOf(ctx: RequestContext): Upstream {
  const upstream = ctx.servedBy;
  if (upstream === undefined) throw missing('servedBy', 'dispatch');
  return upstream;
}
