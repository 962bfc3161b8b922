import type { CancelSignal } from '../contracts/cancel-signal.js';

/**
 * A {@link CancelSignal} that aborts once, when {@link CancelToken.abort} is called. Listeners run once
 * (as with `{ once: true }`), in the order they were added; one that throws does not stop the others.
 */
export class CancelToken implements CancelSignal {
  #aborted = false;
  #reason: unknown = undefined;
  // Most tokens have no listener or one (the upstream request in flight): no array for those.
  #listeners: (() => void) | Array<() => void> | undefined = undefined;

  /** Whether it was cancelled. */
  get aborted(): boolean {
    return this.#aborted;
  }

  /** Why it was cancelled. */
  get reason(): unknown {
    return this.#reason;
  }

  /** Adds a listener (once); on a token already cancelled it is never called, as with an `AbortSignal`. */
  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.#aborted) return;
    const listeners = this.#listeners;
    if (listeners === undefined) this.#listeners = listener;
    else if (typeof listeners === 'function') this.#listeners = [listeners, listener];
    else listeners.push(listener);
  }

  /** Removes a listener. */
  removeEventListener(_type: 'abort', listener: () => void): void {
    const listeners = this.#listeners;
    if (listeners === listener) this.#listeners = undefined;
    else if (Array.isArray(listeners)) {
      const at = listeners.indexOf(listener);
      if (at !== -1) listeners.splice(at, 1);
    }
  }

  /** Cancels: sets the reason and calls the listeners once. Later calls do nothing. */
  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    const listeners = this.#listeners;
    this.#listeners = undefined;
    if (listeners === undefined) return;
    if (typeof listeners === 'function') return call(listeners);
    for (const listener of listeners) call(listener);
  }
}

function call(listener: () => void): void {
  try {
    listener();
  } catch (error) {
    // As an EventTarget does: the error surfaces, and the other listeners still run.
    queueMicrotask(() => {
      throw error;
    });
  }
}
