import { Transform, type TransformCallback } from 'node:stream';

/**
 * What an upload may carry beyond the bytes a key has left: the multipart framing (each part's headers
 * and boundary), which the pinned DAG does not hold. Whatever the upload holds is weighed exactly once
 * the node has it; this bound only stops an upload that cannot fit long before its end.
 */
export const UPLOAD_FRAMING_BYTES = 1 << 20;

/** An upload passed through a byte bound, and whether it was cut. */
export interface BoundedUpload {
  /** The upload as the node gets it: the client's bytes up to the bound, then its end. */
  readonly body: NodeJS.ReadableStream;
  /** Whether the upload passed the bound (the node then got a truncated body, which it refuses). */
  exceeded(): boolean;
}

/**
 * Passes `upload` on until it carries more than `maxBytes`, then ends the stream the node reads (a
 * truncated multipart body, which the node refuses) and stops reading the client's: its connection is
 * closed with the answer. Errors and an early close of the client's upload end the node's too.
 */
export function boundUpload(upload: NodeJS.ReadableStream, maxBytes: number): BoundedUpload {
  let seen = 0;
  let cut = false;
  const source = upload as NodeJS.ReadableStream & { readableEnded?: boolean; once(event: string, listener: (...args: unknown[]) => void): unknown };
  const counter = new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback) {
      if (cut) return done();
      seen += chunk.length;
      if (seen <= maxBytes) return done(null, chunk);
      cut = true;
      source.unpipe(counter);
      source.pause();
      this.push(null);
      done();
    },
  });
  source.once('error', (error) => counter.destroy(error as Error));
  source.once('close', () => {
    if (!cut && source.readableEnded !== true) counter.destroy(new Error('the client went away during the upload'));
  });
  source.pipe(counter);
  return { body: counter, exceeded: () => cut };
}
