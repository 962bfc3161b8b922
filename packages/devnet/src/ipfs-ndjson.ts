import type { ServerResponse } from 'node:http';
import { endWithStreamError, KUBO_HEADERS, write } from './ipfs-wire.js';

/**
 * A command's answer of several objects, as go-ipfs-cmds streams one: the 200 and `X-Chunked-Output: 1`
 * go out with the first object (an error before it is answered whole, with kubo's error body), then one
 * JSON object per line; an error after it ends the stream with the `X-Stream-Error` trailer.
 */
export class NdjsonAnswer {
  #started = false;

  constructor(private readonly res: ServerResponse) {}

  /** Whether the 200 was sent. */
  get started(): boolean {
    return this.#started;
  }

  /** Sends the headers now, for a command that answers 200 with no object (kubo's empty stream). */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    this.res.writeHead(200, { ...KUBO_HEADERS, 'content-type': 'application/json', 'x-chunked-output': '1' });
  }

  /** Writes one object and its newline; false when the client went away. */
  async emit(value: unknown): Promise<boolean> {
    this.start();
    return write(this.res, `${JSON.stringify(value)}\n`);
  }

  /** Ends the answer. */
  end(): void {
    this.start();
    this.res.end();
  }

  /** Runs `body`, then ends the answer; an error once started goes into the trailer, an earlier one is thrown. */
  async run(body: () => Promise<void>): Promise<void> {
    try {
      await body();
    } catch (error) {
      if (!this.#started) throw error;
      endWithStreamError(this.res, (error as Error).message);
      return;
    }
    if (!this.res.destroyed) this.end();
  }
}
