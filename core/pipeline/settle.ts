import { Observable, type OperatorFunction, type Subscription } from 'rxjs';
import type { Logger } from 'pino';
import type { RequestContext } from '../contracts/request-context.js';
import { Errors } from '../errors/catalog.js';
import { toGatewayError } from '../errors/gateway-error.js';
import { cancelledError } from './cancelled.js';
import { pendingStep } from './pending-step.js';
import { completionViolation, emissionViolation } from './stage-contract.js';

/** What {@link settleCall} needs from the gateway; a `GatewayRuntime` is one. */
export interface CallSettlement {
  /** Where a call that failed inside the gateway, or a compensation that failed, is logged. */
  readonly logger: Logger;
  /** Records the finished call's usage and tells the call observers, once per call. */
  finishCall(ctx: RequestContext): void;
}

/** Runs the compensations a failed call registered, newest first; one that fails is logged and does not stop the others. */
async function compensate(ctx: RequestContext, logger: Logger): Promise<void> {
  for (let i = ctx.compensations.length - 1; i >= 0; i--) {
    try {
      await ctx.compensations[i]!();
    } catch (error) {
      logger.error({ call: ctx.id, err: error }, 'compensation failed');
    }
  }
  ctx.compensations.length = 0;
}

/**
 * Fails a call as the pipeline does: records the failure on `ctx.error` (a coded error; anything else
 * becomes `INTERNAL_ERROR`, logged) and runs its compensations, newest first. Returns the promise of the
 * compensations, or undefined when there are none (the call can settle at once).
 */
export function failCall(ctx: RequestContext, error: unknown, logger: Logger): Promise<void> | undefined {
  ctx.error = toGatewayError(error, Errors.INTERNAL_ERROR);
  if (ctx.error.entry === Errors.INTERNAL_ERROR || ctx.error.entry === Errors.STAGE_CONTRACT_VIOLATED) {
    logger.error({ call: ctx.id, err: error }, 'call failed inside the gateway');
  }
  return ctx.compensations.length === 0 ? undefined : compensate(ctx, logger);
}

/**
 * The closing operator of a pipeline composed with plain RxJS: `of(ctx).pipe(...stages, settleCall(ctx,
 * gateway))` behaves as the gateway's own pipeline (`GatewayRuntime.execute`) does with the same
 * stages. It emits `ctx` once and completes, never errors:
 *
 * - a stage's error becomes `ctx.error` (a coded error; anything else `INTERNAL_ERROR`) and the call's
 *   compensations run once, newest first (a debit is refunded);
 * - the call is cancelled the one way the pipeline knows, whichever reaches it first: unsubscribing,
 *   the signal the context was made with, or `ctx.cancel()`. The stages are left at once (no later
 *   stage runs), the upstream request in flight is aborted (dispatch listens to the same cancellation),
 *   a step whose promise is pending is waited for, so its work registers its compensation first, and
 *   the call fails with the client-went-away error and is refunded once;
 * - the finished call is handed to `finishCall` (usage, observers) once, answered, failed or cancelled;
 * - the stages must emit that same context once: another object, a second one or none fails the call
 *   with `STAGE_CONTRACT_VIOLATED`. The operators of `stagesOf` run each stage through the engine's own
 *   checked runner, so a stage that breaks the contract fails the call where it runs (no later stage,
 *   no upstream request); this operator applies the same check to the end of the chain, for operators
 *   of your own placed between them.
 *
 * @example
 * ```ts
 * // pipe() with the stages in turn (its typings take operators by position, so a list is reduced).
 * const run = (ctx: RequestContext): Observable<RequestContext> =>
 *   gateway.stagesOf(ctx).reduce((source, stage) => source.pipe(stage), of(ctx)).pipe(settleCall(ctx, gateway));
 * ```
 */
export function settleCall(ctx: RequestContext, settlement: CallSettlement): OperatorFunction<RequestContext, RequestContext> {
  return (source) =>
    new Observable<RequestContext>((subscriber) => {
      const signal = ctx.cancelSignal;
      let stages: Subscription | undefined;
      let leaving = false;
      let settled = false;
      let emitted = 0;
      const leaveStages = (): void => {
        const subscription = stages;
        stages = undefined;
        subscription?.unsubscribe();
      };
      const finish = (): void => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onCancel);
        settlement.finishCall(ctx);
        subscriber.next(ctx);
        subscriber.complete();
      };
      const fail = (error: unknown): void => {
        if (leaving) return;
        leaving = true;
        leaveStages();
        const undo = failCall(ctx, error, settlement.logger);
        if (undo === undefined) finish();
        else void undo.then(finish);
      };
      const onCancel = (): void => {
        if (leaving || settled) return;
        leaveStages();
        const pending = pendingStep(ctx);
        if (pending === undefined) return fail(cancelledError());
        // As the pipeline's loop: the step's own failure (an aborted upstream request) if it failed,
        // else the cancellation, at the boundary after it.
        pending.then(() => fail(cancelledError()), fail);
      };
      if (signal.aborted) {
        fail(cancelledError());
        return;
      }
      signal.addEventListener('abort', onCancel);
      stages = source.subscribe({
        next: (out) => {
          if (leaving) return;
          const violation = emissionViolation(ctx, out, ++emitted);
          if (violation !== undefined) return fail(violation);
          // A chain that emitted but never completes (a stage holding an open source) cannot hold the call.
          queueMicrotask(() => {
            if (!leaving && !settled) done();
          });
        },
        error: fail,
        complete: () => {
          if (!leaving && !settled) done();
        },
      });
      // Failed or finished while subscribing: nothing of the stages stays subscribed.
      if (leaving || settled) leaveStages();
      function done(): void {
        const violation = completionViolation(emitted);
        if (violation !== undefined) return fail(violation);
        if (signal.aborted) return fail(cancelledError());
        leaveStages();
        finish();
      }
      return () => {
        // Unsubscribing before the answer is one of the ways to cancel the call.
        if (!settled) ctx.cancel(cancelledError());
        leaveStages();
      };
    });
}
