import { Observable } from 'rxjs';
import type { RequestContext } from '../contracts/request-context.js';
import { failCall } from './settle.js';
import { CORE_STAGES, type CoreStageName, type Stage, type StageDefinition, type StageDependencies } from '../contracts/stage.js';
import { checkedStage, stepFunctionOf, type PipelineEntry } from './stage-runner.js';
import { CallRun, type RunOwner } from './call-run.js';
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

/** Something a call keeps busy for as long as a subscription to its run lasts (the generation it runs on). */
export interface CallHold {
  /** A subscription to the call's run starts. */
  enter(): void;
  /** That subscription ended (answered or cancelled). */
  leave(): void;
}

/** An assembled pipeline: the fused run of a call, and the same stages as operators. */
export interface BuiltPipeline {
  /**
   * Runs one call (see {@link buildPipeline}), holding `hold` while a subscription lasts: in the run's own
   * observable, rather than one more wrapped around it per call.
   */
  execute(ctx: RequestContext, hold?: CallHold): Observable<RequestContext>;
  /**
   * The stages a call runs, in order, as checked operators (for `pipe()` and `settleCall`): each runs its
   * stage on each call on its own and holds it to the contract where it runs, as `execute` does.
   */
  stagesOf(ctx: RequestContext): readonly Stage[];
}

/** The stages of one network and transport. */
interface PairStages {
  readonly stages: readonly BuiltStage[];
  readonly entries: readonly PipelineEntry[];
  operators: readonly Stage[] | undefined;
}

interface BuiltStage {
  /** What the engine's run runs: the step function, or the operator under its name. */
  readonly entry: PipelineEntry;
  /** What the composed form runs: the same entry as a checked operator (a step's own operator is one). */
  readonly operator: Stage;
  readonly families: readonly string[] | undefined;
  readonly transports: readonly string[] | undefined;
}

/**
 * Assembles the pipeline: the core stages with plugin stages inserted, and a final handler that turns any
 * failure into `ctx.error` after running the call's compensations, then hands the finished context to
 * `finished` (usage and observers). The returned `execute` is lazy: nothing happens until its observable
 * is subscribed, and the observable never errors. Unsubscribing before the answer, or aborting the
 * signal the context was made with, cancels the call the same way: the run stops at the next stage
 * boundary, the upstream request in flight is aborted, and the call fails and is refunded once.
 *
 * Each network and transport gets the stages that concern them: a stage that declares `families` (or
 * `transports`) is left out of the pipelines of the other networks (or transports). Stages built with
 * `step()` (all the core's are) run inline, one after the other, without an operator per stage; any
 * other operator is applied to each call on its own and held to the one-context-in, one-context-out
 * contract. `stagesOf` gives the same stages as operators that run each entry the same way (steps
 * inline, operator stages through the same checked runner, `stage-runner.ts`): composed with `pipe()`
 * and closed with `settleCall`, they behave as `execute` does, a stage that breaks the contract
 * included (the call fails at that stage, before dispatch).
 */
export function buildPipeline(
  deps: StageDependencies,
  extra: readonly StageDefinition[],
  finished: (ctx: RequestContext) => void = () => {},
): BuiltPipeline {
  const definitions = new Map<string, StageDefinition>();
  for (const stage of extra) definitions.set(stage.name, stage);
  const built: BuiltStage[] = orderStages(extra).map((name) => {
    const definition = definitions.get(name);
    const stage = definition === undefined ? coreFactories[name as CoreStageName](deps) : definition.create(deps);
    const fn = stepFunctionOf(stage);
    const entry: PipelineEntry = fn ?? { name, stage };
    return { entry, operator: fn === undefined ? checkedStage(entry) : stage, families: definition?.families, transports: definition?.transports };
  });

  const owner: RunOwner = {
    fail: (ctx, error) => failCall(ctx, error, deps.logger),
    finished,
  };

  // The stages of each network and transport, chosen on the first call of each pair; the fused run's
  // entries are made with them, the operators on first request.
  const perNetwork = new Map<RequestContext['network'], Map<string, PairStages>>();
  const stagesFor = (ctx: RequestContext): PairStages => {
    const network = ctx.network;
    let byTransport = perNetwork.get(network);
    if (byTransport === undefined) perNetwork.set(network, (byTransport = new Map()));
    let pair = byTransport.get(ctx.transport);
    if (pair === undefined) {
      const families = new Set(network.families.map((f) => f.name));
      const transport = ctx.transport;
      const stages = built.filter((b) => (b.families === undefined || b.families.some((f) => families.has(f))) && (b.transports === undefined || b.transports.includes(transport)));
      pair = { stages, entries: stages.map((b) => b.entry), operators: undefined };
      byTransport.set(transport, pair);
    }
    return pair;
  };

  return {
    execute: (ctx, hold) =>
      new Observable<RequestContext>((subscriber) => {
        const run = new CallRun(ctx, stagesFor(ctx).entries, owner, subscriber);
        hold?.enter();
        try {
          run.run(0);
        } catch (error) {
          // No teardown is returned from a subscribe that throws: leave here.
          hold?.leave();
          throw error;
        }
        if (hold === undefined) return () => run.cancel();
        return () => {
          run.cancel();
          hold.leave();
        };
      }),
    stagesOf(ctx) {
      const pair = stagesFor(ctx);
      return (pair.operators ??= pair.stages.map((b) => b.operator));
    },
  };
}
