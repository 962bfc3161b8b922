import { mergeMap, Observable, of, type Subscription } from 'rxjs';
import type { RequestContext } from '../contracts/request-context.js';
import type { Stage, StepFunction } from '../contracts/stage.js';
import { isPromise, type MaybePromise } from '../util/maybe-promise.js';
import { cancelledError } from './cancelled.js';
import { trackStep } from './pending-step.js';
import { completionViolation, emissionViolation } from './stage-contract.js';

/** An operator stage as the pipeline runs it: applied to one call at a time, under its name for errors. */
export interface OperatorEntry {
  /** The stage's name, for its contract errors. */
  readonly name: string;
  /** The operator. */
  readonly stage: Stage;
}

/** One position of an assembled pipeline: a step function (run inline) or an operator stage. */
export type PipelineEntry = StepFunction | OperatorEntry;

/**
 * Applies an operator stage to one call on its own (`stage(of(ctx))`) and holds it to the contract: the
 * same context, once. Calls `passed` when the stage passed the context on, or `failed` with the stage's
 * error or the contract violation, at most one of them, once. A stage that emitted once but does not
 * complete is left at the next microtask, so a second synchronous emission is still caught and a
 * never-completing source cannot hold the call.
 *
 * Returns undefined when the stage already left (it answered synchronously), else the function that
 * leaves it early (a cancelled call): it unsubscribes the stage, calls neither callback, and returns
 * whether the stage was still running. The engine's run and the composed form's operators both run
 * operator stages through it, so both check the contract where the stage runs.
 */
export function runOperator(ctx: RequestContext, entry: OperatorEntry, passed: () => void, failed: (error: unknown) => void): (() => boolean) | undefined {
  let emitted = 0;
  let left = false;
  let subscription: Subscription | undefined;
  const leave = (): boolean => {
    if (left) return false;
    left = true;
    const running = subscription;
    subscription = undefined;
    running?.unsubscribe();
    return true;
  };
  const pass = (): void => {
    if (leave()) passed();
  };
  const fail = (error: unknown): void => {
    if (leave()) failed(error);
  };
  const subscribed = entry.stage(of(ctx)).subscribe({
    next: (out) => {
      if (left) return;
      const violation = emissionViolation(ctx, out, ++emitted, entry.name);
      if (violation !== undefined) return fail(violation);
      queueMicrotask(pass);
    },
    error: fail,
    complete: () => {
      const violation = completionViolation(emitted, entry.name);
      if (violation === undefined) pass();
      else fail(violation);
    },
  });
  if (left) {
    subscribed.unsubscribe();
    return undefined;
  }
  subscription = subscribed;
  return leave;
}

/**
 * A pipeline entry as the RxJS operator the composed form runs: each context it receives runs the entry
 * on its own, as the engine's run does. A call already cancelled fails at the entry's boundary (nothing
 * runs); a step function runs, and a promise it returns is registered as the step the call waits in
 * (so a cancelled composition waits for it, see `settleCall`); an operator stage runs through
 * {@link runOperator}, so a stage that emits twice, another object or nothing fails the call right there,
 * before any later stage (dispatch) runs. Unsubscribing leaves the entry at once.
 */
export function checkedStage(entry: PipelineEntry): Stage {
  return mergeMap(
    (ctx: RequestContext) =>
      new Observable<RequestContext>((subscriber) => {
        const passed = (): void => {
          subscriber.next(ctx);
          subscriber.complete();
        };
        const failed = (error: unknown): void => subscriber.error(error);
        if (ctx.cancelSignal.aborted) return failed(cancelledError());
        if (typeof entry !== 'function') return runOperator(ctx, entry, passed, failed);
        let result;
        try {
          result = entry(ctx);
        } catch (error) {
          return failed(error);
        }
        if (result !== undefined && isPromise(result)) void trackStep(ctx, result).then(passed, failed);
        else passed();
        return undefined;
      }),
  );
}

const STEP = Symbol.for('tollgate.step');

/** The function of a stage built with {@link step}, or undefined for any other operator. */
export function stepFunctionOf(stage: Stage): StepFunction | undefined {
  return (stage as Stage & { [STEP]?: StepFunction })[STEP];
}

/**
 * Builds a stage from a function that inspects or updates the context, synchronously or not. Throwing
 * (or rejecting) fails the call. Synchronous work stays synchronous, so cheap stages cost no extra tick,
 * and the pipeline runs consecutive `step` stages in one plain loop rather than one operator each.
 *
 * The stage is also an ordinary RxJS operator, the one the composed pipeline (`stagesOf` closed with
 * `settleCall`) runs: a call already cancelled fails at this stage's boundary (the function does not
 * run), and a call cancelled while the function's promise is pending waits for it, so what it did (a
 * debit) registers its compensation before the call is refunded.
 *
 * @example
 * ```ts
 * const tagged: Stage = step((ctx) => { ctx.state.set(TAG, 'seen'); });
 * ```
 */
export function step(fn: StepFunction): Stage {
  return Object.assign(checkedStage(fn), { [STEP]: fn });
}
