import { of, type Subscriber, type Subscription } from 'rxjs';
import type { RequestContext } from '../model/context.js';
import { isPromise, type Stage, type StepFunction } from '../model/stage.js';
import { Errors } from '../leaves/errors/catalog.js';
import { GatewayError } from '../leaves/errors/gateway-error.js';

/** An operator stage as the pipeline runs it: applied to one call at a time, under its name for errors. */
export interface OperatorEntry {
  readonly name: string;
  readonly stage: Stage;
}

/** One position of an assembled pipeline: a step function (run inline) or an operator stage. */
export type PipelineEntry = StepFunction | OperatorEntry;

/** What a run needs from the pipeline that owns it. */
export interface RunOwner {
  /** Records the failure on the context and starts its compensations; undefined when there are none. */
  fail(ctx: RequestContext, error: unknown): Promise<void> | undefined;
  /** Usage and observers, once per call. */
  finished(ctx: RequestContext): void;
}

/** The error a call fails with when its subscriber left before the answer. */
export function cancelledError(): GatewayError {
  return new GatewayError(Errors.UPSTREAM_UNAVAILABLE, { message: 'the client went away' });
}

function contractError(stage: string, what: string): GatewayError {
  return new GatewayError(Errors.STAGE_CONTRACT_VIOLATED, { message: `pipeline stage "${stage}" ${what}` });
}

/**
 * One subscription to one call: walks the pipeline's entries, inline while they answer synchronously,
 * and hands the finished context to the subscriber exactly once.
 *
 * Cancellation is unsubscription. The run then aborts the context's signal (dispatch's upstream request
 * with it), leaves an operator stage it was waiting on, and fails the call even if an answer arrives
 * later, so the compensations (the refund) run: an answer that reached nobody is never charged.
 */
export class CallRun {
  readonly #ctx: RequestContext;
  readonly #entries: readonly PipelineEntry[];
  readonly #owner: RunOwner;
  readonly #subscriber: Subscriber<RequestContext>;
  #operator: Subscription | undefined = undefined;
  #cancelled = false;
  #failed = false;
  #settled = false;

  constructor(ctx: RequestContext, entries: readonly PipelineEntry[], owner: RunOwner, subscriber: Subscriber<RequestContext>) {
    this.#ctx = ctx;
    this.#entries = entries;
    this.#owner = owner;
    this.#subscriber = subscriber;
  }

  /** Runs from `from` until the end, a pending promise or an operator stage. */
  run(from: number): void {
    const entries = this.#entries;
    const ctx = this.#ctx;
    for (let i = from; i < entries.length; i++) {
      if (this.#cancelled) return this.#fail(cancelledError());
      const entry = entries[i]!;
      if (typeof entry !== 'function') return this.#operate(entry, i);
      let result;
      try {
        result = entry(ctx);
      } catch (error) {
        return this.#fail(error);
      }
      if (result !== undefined && isPromise(result)) {
        result.then(() => this.run(i + 1), (error: unknown) => this.#fail(error));
        return;
      }
    }
    if (this.#cancelled) return this.#fail(cancelledError());
    this.#finish();
  }

  /** The subscription's teardown: a no-op once the call settled. */
  cancel(): void {
    if (this.#settled || this.#cancelled) return;
    this.#cancelled = true;
    this.#ctx.cancel(cancelledError());
    const operator = this.#operator;
    if (operator !== undefined) {
      this.#operator = undefined;
      operator.unsubscribe();
      this.#fail(cancelledError());
    }
    // Otherwise a step is pending: when it settles, `run` sees the cancellation and fails the call.
  }

  /**
   * Applies an operator stage to this call alone and checks its contract: the same context, once. A
   * stage that emitted once but does not complete is left at the next microtask, so a second synchronous
   * emission is still caught and a never-completing source cannot hold the call.
   */
  #operate(entry: OperatorEntry, at: number): void {
    const ctx = this.#ctx;
    let emitted = 0;
    let left = false;
    const leave = (error?: GatewayError | { value: unknown }): void => {
      if (left) return;
      left = true;
      const operator = this.#operator;
      this.#operator = undefined;
      operator?.unsubscribe();
      if (error === undefined) this.run(at + 1);
      else this.#fail(error instanceof GatewayError ? error : error.value);
    };
    const subscription = entry.stage(of(ctx)).subscribe({
      next: (out) => {
        if (left) return;
        emitted++;
        if (out !== ctx) return leave(contractError(entry.name, 'emitted another object than the context it received'));
        if (emitted > 1) return leave(contractError(entry.name, 'emitted more than one context'));
        queueMicrotask(() => leave());
      },
      error: (error: unknown) => leave({ value: error }),
      complete: () => leave(emitted === 0 ? contractError(entry.name, 'completed without emitting its context') : undefined),
    });
    if (left) subscription.unsubscribe();
    else this.#operator = subscription;
  }

  #fail(error: unknown): void {
    if (this.#failed || this.#settled) return;
    this.#failed = true;
    const undo = this.#owner.fail(this.#ctx, error);
    if (undo === undefined) this.#finish();
    else void undo.then(() => this.#finish());
  }

  #finish(): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#owner.finished(this.#ctx);
    this.#subscriber.next(this.#ctx);
    this.#subscriber.complete();
  }
}
