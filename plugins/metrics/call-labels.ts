import type { RequestContext } from '../../core/plugin-api.js';

/** The method label of a call: its name when the network offers it, `other` otherwise, so clients cannot invent label values. */
export function methodLabel(ctx: RequestContext): string {
  const method = ctx.method?.name ?? ctx.call.method;
  return ctx.network.methods.has(method) ? method : 'other';
}

/** The outcome label of a call: `ok` (an upstream answer reached the client, a node's own error included) or the error's catalog name. */
export function statusLabel(ctx: RequestContext): string {
  return ctx.error === undefined ? 'ok' : ctx.error.entry.name;
}

/** Credits a call was charged: its debit, unless the call failed and was refunded. */
export function chargedCredits(ctx: RequestContext): number {
  return ctx.error === undefined && ctx.debit !== undefined ? ctx.debit.credits : 0;
}
