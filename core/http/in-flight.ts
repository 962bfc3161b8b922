import type { ServerResponse } from 'node:http';

/**
 * The responses a transport is still answering, so that shutting down can wait for them (drain)
 * instead of cutting clients off mid-answer.
 *
 * @example
 * ```ts
 * const inFlight = new InFlightResponses();
 * // in handleRequest, once the request is claimed:
 * inFlight.track(res);
 * // in close():
 * await inFlight.drain(5_000);
 * ```
 */
export class InFlightResponses {
  readonly #responses = new Set<ServerResponse>();
  #drained: (() => void) | undefined;

  /** How many responses are not finished yet. */
  get size(): number {
    return this.#responses.size;
  }

  /**
   * One listener for every response: an emitter calls it with the response as `this`, so tracking a
   * response allocates no closure (and `close` comes once, so no `once` wrapper is needed either).
   */
  readonly #onClose: (this: ServerResponse) => void;

  constructor() {
    const responses = this.#responses;
    const untrack = (): void => {
      if (responses.size === 0) this.#drained?.();
    };
    this.#onClose = function onClose(this: ServerResponse): void {
      if (responses.delete(this)) untrack();
    };
  }

  /** Tracks `res` until it is finished or its connection is gone. */
  track(res: ServerResponse): void {
    if (this.#responses.has(res)) return;
    this.#responses.add(res);
    res.on('close', this.#onClose);
  }

  /** Resolves once every tracked response has finished, or after `timeoutMs`, whichever is first. */
  drain(timeoutMs: number): Promise<void> {
    if (this.#responses.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, timeoutMs);
      timer.unref();
      const self = this;
      function done(): void {
        clearTimeout(timer);
        self.#drained = undefined;
        resolve();
      }
      this.#drained = done;
    });
  }
}
