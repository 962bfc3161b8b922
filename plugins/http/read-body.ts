import type { IncomingMessage } from 'node:http';

/** The body was larger than allowed. */
export class BodyTooLargeError extends Error {
  /** The limit that was exceeded, in bytes. */
  readonly limit: number;
  constructor(limit: number) {
    super(`request body exceeds ${limit} bytes`);
    this.name = 'BodyTooLargeError';
    this.limit = limit;
  }
}

/** Collects one request's body; a class rather than closures, so nothing is allocated per chunk or per event type. */
class BodyCollector {
  readonly chunks: Buffer[] = [];
  size = 0;
  constructor(
    readonly req: IncomingMessage,
    readonly limit: number,
    readonly resolve: (body: Buffer) => void,
    readonly reject: (error: Error) => void,
  ) {
    req.on('data', this.onData);
    req.on('end', this.onEnd);
    req.on('error', this.onError);
  }

  readonly onData = (chunk: Buffer): void => {
    this.size += chunk.length;
    if (this.size > this.limit) {
      this.cleanup();
      this.req.resume();
      this.reject(new BodyTooLargeError(this.limit));
      return;
    }
    this.chunks.push(chunk);
  };

  readonly onEnd = (): void => {
    this.cleanup();
    this.resolve(this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size));
  };

  readonly onError = (error: Error): void => {
    this.cleanup();
    this.reject(error);
  };

  cleanup(): void {
    this.req.off('data', this.onData);
    this.req.off('end', this.onEnd);
    this.req.off('error', this.onError);
  }
}

/**
 * Reads a request body into one buffer, refusing as soon as it grows past `limit` bytes (so an oversized
 * body is never held in memory whole).
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.reject(new BodyTooLargeError(limit));
  return new Promise((resolve, reject) => void new BodyCollector(req, limit, resolve, reject));
}
