import { Observable } from 'rxjs';
import type { RequestContext } from '../types.js';
import { Errors } from '../errors/catalog.js';
import { toGatewayError } from '../errors/gateway-error.js';
import { CORE_STAGES, stepFunctionOf, type CoreStageName, type Stage, type StageDefinition, type StageDependencies } from './stage.js';
import { CallRun, type PipelineEntry, type RunOwner } from './call-run.js';
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
 * Assembles the pipeline: the core stages with plugin stages inserted, and a final handler that turns any
 * failure into `ctx.error` after running the call's compensations, then hands the finished context to
 * `finished` (usage and observers). The returned function is lazy: nothing happens until its observable
 * is subscribed, and the observable never errors. Unsubscribing before the answer, or aborting the
 * signal the context was made with, cancels the call the same way: the run stops at the next stage
 * boundary, the upstream request in flight is aborted, and the call fails and is refunded once.
 *
 * Each network and transport gets the stages that concern them: a stage that declares `families` (or
 * `transports`) is left out of the pipelines of the other networks (or transports). Stages built with `step()` (all the core's are) run inline, one after
 * the other, without an operator per stage; any other operator is applied to each call on its own and
 * held to the one-context-in, one-context-out contract.
 */
export function buildPipeline(
  deps: StageDependencies,
  extra: readonly StageDefinition[],
  finished: (ctx: RequestContext) => void = () => {},
): (ctx: RequestContext) => Observable<RequestContext> {
  const definitions = new Map<string, StageDefinition>();
  for (const stage of extra) definitions.set(stage.name, stage);
  const built: Array<{ entry: PipelineEntry; families: readonly string[] | undefined; transports: readonly string[] | undefined }> = orderStages(extra).map((name) => {
    const definition = definitions.get(name);
    const stage = definition === undefined ? coreFactories[name as CoreStageName](deps) : definition.create(deps);
    return { entry: stepFunctionOf(stage) ?? { name, stage }, families: definition?.families, transports: definition?.transports };
  });

  const owner: RunOwner = {
    fail(ctx, error) {
      ctx.error = toGatewayError(error, Errors.INTERNAL_ERROR);
      if (ctx.error.entry === Errors.INTERNAL_ERROR || ctx.error.entry === Errors.STAGE_CONTRACT_VIOLATED) {
        deps.logger.error({ call: ctx.id, err: error }, 'call failed inside the gateway');
      }
      return ctx.compensations.length === 0 ? undefined : compensate(ctx, deps);
    },
    finished,
  };

  // One entry list per network and transport, made on the first call of each pair.
  const perNetwork = new Map<RequestContext['network'], Map<string, readonly PipelineEntry[]>>();
  const entriesFor = (network: RequestContext['network'], transport: string): readonly PipelineEntry[] => {
    let byTransport = perNetwork.get(network);
    if (byTransport === undefined) perNetwork.set(network, (byTransport = new Map()));
    let entries = byTransport.get(transport);
    if (entries === undefined) {
      const families = new Set(network.families.map((f) => f.name));
      entries = built
        .filter((b) => (b.families === undefined || b.families.some((f) => families.has(f))) && (b.transports === undefined || b.transports.includes(transport)))
        .map((b) => b.entry);
      byTransport.set(transport, entries);
    }
    return entries;
  };

  return (ctx) =>
    new Observable<RequestContext>((subscriber) => {
      const run = new CallRun(ctx, entriesFor(ctx.network, ctx.transport), owner, subscriber);
      run.run(0);
      return () => run.cancel();
    });
}
