import type { Subscriber } from 'rxjs';
import type { RequestContext } from '../contracts/request-context.js';
import { isPromise } from '../util/maybe-promise.js';
import { cancelledError } from './cancelled.js';
import { runOperator, type OperatorEntry, type PipelineEntry } from './stage-runner.js';
import { RunAhead } from './run-ahead.js';

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
 *
 * A step that returns a {@link RunAhead} (`meter`, with a charge its store answers later) lets the call
 * go on through the entries marked in `ahead` while its work is pending; the run waits for it before any
 * other entry, before it finishes, and before it fails, so the answer never leaves before the charge
 * is taken and a refund is registered before the compensations run. When that work fails, its error is
 * the call's, whatever a later stage failed with meanwhile, as if the run had waited for it there.
 */
export class CallRun {
  readonly #ctx: RequestContext;
  readonly #entries: readonly PipelineEntry[];
  readonly #owner: RunOwner;
  readonly #subscriber: Subscriber<RequestContext>;
  readonly #ahead: readonly boolean[];
  #failed = false;
  #settled = false;
  /** The work of a step the run went on past (see {@link RunAhead}), while it is pending. */
  #pending: Promise<void> | undefined;
  /** That work's failure, once it failed. */
  #pendingFailed: { readonly error: unknown } | undefined;

  /** `ahead[i]`: whether entry `i` may run while a step's work is pending (see {@link RunAhead}). */
  constructor(ctx: RequestContext, entries: readonly PipelineEntry[], owner: RunOwner, subscriber: Subscriber<RequestContext>, ahead: readonly boolean[] = []) {
    this.#ctx = ctx;
    this.#entries = entries;
    this.#ahead = ahead;
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
      // Work the run went on past failed: the call fails with its error, as if the run had waited there.
      if (this.#pendingFailed !== undefined) return this.#fail(this.#pendingFailed.error);
      if (this.#pending !== undefined && this.#ahead[i] !== true) return this.#afterPending(i);
      const entry = entries[i]!;
      if (typeof entry !== 'function') return this.#operate(entry, i);
      let result;
      try {
        result = entry(ctx);
      } catch (error) {
        return this.#fail(error);
      }
      if (result instanceof RunAhead) {
        this.#goOnPast(result.settled);
        continue;
      }
      if (result !== undefined && isPromise(result)) {
        result.then(() => this.run(i + 1), (error: unknown) => this.#fail(error));
        return;
      }
    }
    if (cancelled.aborted) return this.#fail(cancelledError());
    if (this.#pendingFailed !== undefined) return this.#fail(this.#pendingFailed.error);
    if (this.#pending !== undefined) return this.#afterPending(entries.length);
    this.#finish();
  }

  #goOnPast(work: Promise<void>): void {
    this.#pendingFailed = undefined;
    const pending: Promise<void> = work.then(
      () => {
        if (this.#pending === pending) this.#pending = undefined;
      },
      (error: unknown) => {
        if (this.#pending === pending) this.#pending = undefined;
        this.#pendingFailed = { error };
        // A refused charge: the node's request in flight is let go at once (its answer would be dropped).
        if (!this.#settled) this.#ctx.cancel(error);
      },
    );
    this.#pending = pending;
  }

  /** Goes on from entry `from` once the pending work settled (the run fails there if it failed). */
  #afterPending(from: number): void {
    void this.#pending!.then(() => this.run(from));
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
    // What the pending work did (a debit) registers its refund before the compensations run.
    if (this.#pending !== undefined) return void this.#pending.then(() => this.#fail(error));
    this.#failed = true;
    const undo = this.#owner.fail(this.#ctx, this.#pendingFailed?.error ?? error);
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
