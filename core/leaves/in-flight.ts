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

  /** Tracks `res` until it is finished or its connection is gone. */
  track(res: ServerResponse): void {
    this.#responses.add(res);
    res.once('close', () => {
      this.#responses.delete(res);
      if (this.#responses.size === 0) this.#drained?.();
    });
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
