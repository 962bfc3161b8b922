import { catchError, defer, from, map, of, pipe, tap, type Observable } from 'rxjs';
import type { RequestContext } from '../context.js';
import { Errors } from '../errors/catalog.js';
import { toGatewayError } from '../errors/gateway-error.js';
import { CORE_STAGES, type CoreStageName, type Stage, type StageDefinition, type StageDependencies } from './stage.js';
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
      order.splice(stage.before !== undefined ? at : at + 1, 0, stage.name);
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
 * Assembles the pipeline: the core stages with plugin stages inserted, and a final handler that turns any
 * failure into `ctx.error` after running the call's compensations, then hands the finished context to
 * `finished` (usage and observers). The returned function is lazy: nothing happens until its observable
 * is subscribed, and the observable never errors.
 */
export function buildPipeline(
  deps: StageDependencies,
  extra: readonly StageDefinition[],
  finished: (ctx: RequestContext) => void = () => {},
): (ctx: RequestContext) => Observable<RequestContext> {
  const byName = new Map<string, Stage>();
  for (const name of CORE_STAGES) byName.set(name, coreFactories[name](deps));
  for (const stage of extra) byName.set(stage.name, stage.create(deps));
  const stages = orderStages(extra).map((name) => byName.get(name)!);
  const run = (pipe as (...ops: Stage[]) => Stage)(...stages);

  return (ctx) =>
    defer(() => run(of(ctx))).pipe(
      catchError((error: unknown) => {
        ctx.error = toGatewayError(error, Errors.INTERNAL_ERROR);
        if (ctx.error.entry === Errors.INTERNAL_ERROR) deps.logger.error({ call: ctx.id, err: error }, 'call failed inside the gateway');
        return ctx.compensations.length === 0 ? of(ctx) : from(compensate(ctx, deps)).pipe(map(() => ctx));
      }),
      tap(finished),
    );
}
