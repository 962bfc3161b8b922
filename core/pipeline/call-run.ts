import type { Subscriber } from 'rxjs';
import type { RequestContext } from '../contracts/request-context.js';
import { isPromise } from '../util/maybe-promise.js';
import { cancelledError } from './cancelled.js';
import { runOperator, type OperatorEntry, type PipelineEntry } from './stage-runner.js';

export type { OperatorEntry, PipelineEntry } from './stage-runner.js';

/** What a run needs from the pipeline that owns it. */
export interface RunOwner {
  /** Records the failure on the context and starts its compensations; undefined when there are none. */
  fail(ctx: RequestContext, error: unknown): Promise<void> | undefined;
  /** Usage and observers, once per call. */
  finished(ctx: RequestContext): void;
}

/**
 * One subscription to one call: walks the pipeline's entries, inline while they answer synchronously,
 * and hands the finished context to the subscriber exactly once.
 *
 * There is one cancellation, the context's (`RequestContext.cancel`, seen through its `cancelSignal`),
 * and three ways to reach it: the subscriber unsubscribes, the signal the call was created with aborts
 * (`JsonRpcInput.signal`, a transport's own), or the connection closes (its transport unsubscribes).
 * Whichever comes first, the run stops at the next stage boundary (no later stage runs, so `meter` never
 * debits a call already cancelled), leaves an operator stage it was waiting in at once, and the upstream
 * request in flight is aborted (dispatch listens to the same signal). A pending step is not abandoned:
 * the run waits for it to settle, so whatever it did (a debit) has registered its compensation before
 * the call fails and the compensations run, once. An answer that reached nobody is never charged.
 */
export class CallRun {
  readonly #ctx: RequestContext;
  readonly #entries: readonly PipelineEntry[];
  readonly #owner: RunOwner;
  readonly #subscriber: Subscriber<RequestContext>;
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
    const cancelled = ctx.cancelSignal;
    for (let i = from; i < entries.length; i++) {
      if (cancelled.aborted) return this.#fail(cancelledError());
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
    if (cancelled.aborted) return this.#fail(cancelledError());
    this.#finish();
  }

  /**
   * The subscription's teardown: cancels the call (a no-op once it settled). An operator stage the run
   * waits in is left by the context's cancellation; a pending step is waited for (see the class).
   */
  cancel(): void {
    if (this.#settled) return;
    this.#ctx.cancel(cancelledError());
  }

  /**
   * Applies an operator stage to this call alone through {@link runOperator}, which checks its contract
   * (the same context, once) where it runs, and leaves it at once if the call is cancelled meanwhile.
   */
  #operate(entry: OperatorEntry, at: number): void {
    const signal = this.#ctx.cancelSignal;
    const onCancel = (): void => {
      if (leave?.() !== true) return;
      signal.removeEventListener('abort', onCancel);
      this.#fail(cancelledError());
    };
    const leave = runOperator(
      this.#ctx,
      entry,
      () => {
        signal.removeEventListener('abort', onCancel);
        this.run(at + 1);
      },
      (error) => {
        signal.removeEventListener('abort', onCancel);
        this.#fail(error);
      },
    );
    // Cancelled while the stage holds the call (by any of the three ways): leave it now.
    if (leave !== undefined) signal.addEventListener('abort', onCancel);
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
