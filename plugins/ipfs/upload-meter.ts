import { Transform, type TransformCallback } from 'node:stream';

/**
 * An upload on its way to the node: counts its bytes (metered with the call's usage) and cuts it once it
 * passes `limit`, so one request cannot stream more than the operator allows whatever it declared.
 */
export class UploadMeter extends Transform {
  /** Bytes read from the client so far. */
  bytes = 0;
  /** Set once the upload passed the limit (the stream then fails). */
  exceeded = false;
  readonly #limit: number;

  constructor(limit: number) {
    super();
    this.#limit = limit;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.#limit) {
      this.exceeded = true;
      callback(new Error(`the upload exceeds ${this.#limit} bytes`));
      return;
    }
    callback(null, chunk);
  }
}
