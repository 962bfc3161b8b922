import { Transform, type TransformCallback } from 'node:stream';
import type { UploadBlocks } from './upload-blocks.js';

/**
 * An upload on its way to the node: counts its bytes (metered with the call's usage) and cuts it once it
 * passes `limit` bytes, or, given `blocks`, once it holds more than `maxBlocks` blocks, so one request
 * cannot stream more than the operator allows whatever it declared.
 */
export class UploadMeter extends Transform {
  /** Bytes read from the client so far. */
  bytes = 0;
  /** Set once the upload passed a bound (the stream then fails): which one. */
  exceeded: 'bytes' | 'blocks' | undefined;
  readonly #limit: number;
  readonly #blocks: UploadBlocks | undefined;
  readonly #maxBlocks: number;

  constructor(limit: number, blocks?: UploadBlocks, maxBlocks = Number.POSITIVE_INFINITY) {
    super();
    this.#limit = limit;
    this.#blocks = blocks;
    this.#maxBlocks = maxBlocks;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.#limit) {
      this.exceeded = 'bytes';
      callback(new Error(`the upload exceeds ${this.#limit} bytes`));
      return;
    }
    if (this.#blocks !== undefined) {
      this.#blocks.push(chunk);
      if (this.#blocks.count > this.#maxBlocks) {
        this.exceeded = 'blocks';
        callback(new Error(`the upload holds more than ${this.#maxBlocks} blocks`));
        return;
      }
    }
    callback(null, chunk);
  }
}
