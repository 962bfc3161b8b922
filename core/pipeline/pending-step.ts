import type { RequestContext } from '../contracts/request-context.js';

// The step each call is waiting in, when a stage built with step() runs as an operator (the composed
// form, stagesOf piped and closed with settleCall). The fused run knows its pending step itself and
// never writes here.
const pending = new WeakMap<RequestContext, Promise<unknown>>();

/**
 * Marks `work` as the step `ctx` waits in until it settles, and returns the promise of its outcome, so
 * a cancelled call can wait for what the step started (a debit registering its refund) before it
 * settles. The registration is dropped once the step settled.
 */
export function trackStep(ctx: RequestContext, work: Promise<void>): Promise<RequestContext> {
  const tracked: Promise<RequestContext> = work.then(
    () => {
      if (pending.get(ctx) === tracked) pending.delete(ctx);
      return ctx;
    },
    (error: unknown) => {
      if (pending.get(ctx) === tracked) pending.delete(ctx);
      throw error;
    },
  );
  pending.set(ctx, tracked);
  return tracked;
}

/** The step `ctx` waits in, if any (see {@link trackStep}). */
export function pendingStep(ctx: RequestContext): Promise<unknown> | undefined {
  return pending.get(ctx);
}
