import { Observable, catchError, defer, from, map, mergeMap, of, pipe, tap } from 'rxjs';
import type { RequestContext } from '../context.js';
import { Errors } from '../errors/catalog.js';
import { toGatewayError } from '../errors/gateway-error.js';
import { CORE_STAGES, isPromise, stepFunctionOf, type CoreStageName, type Stage, type StageDefinition, type StageDependencies, type StepFunction } from './stage.js';
import { authenticate } from './stages/authenticate.js';
import { validate } from './stages/validate.js';
import { meter } from './stages/meter.js';
import { enforceLimits } from './stages/enforce-limits.js';
import { route } from './stages/route.js';
import { dispatch } from './stages/dispatch.js';
import { checkResult } from './stages/check-result.js';

const coreFactories: Record<CoreStageName, (deps: StageDependencies) => Stage> = {
  authenticate,
  validate,
  meter,
  enforceLimits,
  route,
  dispatch,
  checkResult,
};

/** The stage names of an assembled pipeline, in order. */
export function orderStages(extra: readonly StageDefinition[]): string[] {
  const order: string[] = [...CORE_STAGES];
  const pending = [...extra];
  // The last stage placed after each anchor, so stages after one anchor keep their registration order.
  const lastAfter = new Map<string, string>();
  // Plugin stages may anchor on each other: place whatever has its anchor present, until nothing moves.
  while (pending.length > 0) {
    const before = pending.length;
    for (let i = 0; i < pending.length; i++) {
      const stage = pending[i]!;
      if (order.includes(stage.name)) throw new Error(`pipeline stage "${stage.name}" is defined twice`);
      const anchor = stage.before ?? stage.after;
      if (anchor === undefined) throw new Error(`pipeline stage "${stage.name}" needs "before" or "after"`);
      const at = order.indexOf(anchor);
      if (at === -1) continue;
      if (stage.before !== undefined) order.splice(at, 0, stage.name);
      else {
        order.splice(order.indexOf(lastAfter.get(anchor) ?? anchor) + 1, 0, stage.name);
        lastAfter.set(anchor, stage.name);
      }
      pending.splice(i--, 1);
    }
    if (pending.length === before) {
      throw new Error(`pipeline stage "${pending[0]!.name}" is anchored to unknown stage "${pending[0]!.before ?? pending[0]!.after}"`);
    }
  }
  return order;
}

/**
 * Runs the compensations a failed call registered, newest first. A compensation that fails is logged
 * and does not stop the others.
 */
async function compensate(ctx: RequestContext, deps: StageDependencies): Promise<void> {
  for (let i = ctx.compensations.length - 1; i >= 0; i--) {
    try {
      await ctx.compensations[i]!();
    } catch (error) {
      deps.logger.error({ call: ctx.id, err: error }, 'compensation failed');
    }
  }
  ctx.compensations.length = 0;
}

/**
 * Runs `steps` in order on `ctx`: synchronously while they answer synchronously, switching to a promise
 * chain from the first one that returns a promise. Returns undefined when all ran synchronously.
 */
function runSteps(steps: readonly StepFunction[], ctx: RequestContext, from = 0): Promise<void> | undefined {
  for (let i = from; i < steps.length; i++) {
    const result = steps[i]!(ctx);
    if (isPromise(result)) {
      const next = i + 1;
      return next === steps.length ? result : result.then(() => runSteps(steps, ctx, next));
    }
  }
  return undefined;
}

/** Groups consecutive `step` stages so each group runs as one loop. */
function fuse(stages: readonly Stage[]): Array<StepFunction[] | Stage> {
  const segments: Array<StepFunction[] | Stage> = [];
  for (const stage of stages) {
    const fn = stepFunctionOf(stage);
    const last = segments.at(-1);
    if (fn === undefined) segments.push(stage);
    else if (Array.isArray(last)) last.push(fn);
    else segments.push([fn]);
  }
  return segments;
}

/**
 * Assembles the pipeline: the core stages with plugin stages inserted, and a final handler that turns any
 * failure into `ctx.error` after running the call's compensations, then hands the finished context to
 * `finished` (usage and observers). The returned function is lazy: nothing happens until its observable
 * is subscribed, and the observable never errors.
 *
 * Consecutive stages built with `step()` (all the core's are) run in one plain loop; a plugin stage that
 * is an arbitrary RxJS operator is composed as an operator between them.
 */
export function buildPipeline(
  deps: StageDependencies,
  extra: readonly StageDefinition[],
  finished: (ctx: RequestContext) => void = () => {},
): (ctx: RequestContext) => Observable<RequestContext> {
  const byName = new Map<string, Stage>();
  for (const name of CORE_STAGES) byName.set(name, coreFactories[name](deps));
  for (const stage of extra) byName.set(stage.name, stage.create(deps));
  const segments = fuse(orderStages(extra).map((name) => byName.get(name)!));

  const fail = (ctx: RequestContext, error: unknown): Promise<void> | undefined => {
    ctx.error = toGatewayError(error, Errors.INTERNAL_ERROR);
    if (ctx.error.entry === Errors.INTERNAL_ERROR) deps.logger.error({ call: ctx.id, err: error }, 'call failed inside the gateway');
    return ctx.compensations.length === 0 ? undefined : compensate(ctx, deps);
  };

  if (segments.length === 1 && Array.isArray(segments[0])) {
    // Every stage is a step: one observable per call, no operator chain.
    const steps = segments[0];
    return (ctx) =>
      new Observable<RequestContext>((subscriber) => {
        const done = (): void => {
          finished(ctx);
          subscriber.next(ctx);
          subscriber.complete();
        };
        const failed = (error: unknown): void => {
          const undo = fail(ctx, error);
          if (undo === undefined) done();
          else void undo.then(done);
        };
        let running: Promise<void> | undefined;
        try {
          running = runSteps(steps, ctx);
        } catch (error) {
          failed(error);
          return;
        }
        if (running === undefined) done();
        else running.then(done, failed);
      });
  }

  const operators = segments.map((segment): Stage =>
    Array.isArray(segment)
      ? mergeMap((ctx: RequestContext) => {
          const running = runSteps(segment, ctx);
          return running === undefined ? of(ctx) : from(running.then(() => ctx));
        })
      : segment,
  );
  const run = (pipe as (...ops: Stage[]) => Stage)(...operators);
  return (ctx) =>
    defer(() => run(of(ctx))).pipe(
      catchError((error: unknown) => {
        const undo = fail(ctx, error);
        return undo === undefined ? of(ctx) : from(undo).pipe(map(() => ctx));
      }),
      tap(finished),
    );
}
