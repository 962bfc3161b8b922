import type { IncomingMessage, ServerResponse } from 'node:http';
import { continueBody } from '../../core/transport-api.js';

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
      // The caller refuses the request and drains what is left of the body.
      this.cleanup();
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
 * body is never held in memory whole). A declared length over the limit is refused before anything is
 * read, and before a client that asked for it is told to send its body (`100 Continue`).
 */
export function readBody(req: IncomingMessage, res: ServerResponse, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => collectBody(req, res, limit, resolve, reject));
}

/**
 * `readBody` with callbacks: `onBody` or `onError` is called once (`onError` at once, with a
 * {@link BodyTooLargeError}, for a declared length over the limit). The HTTP transport uses it to spare a
 * promise and a microtask per request.
 */
export function collectBody(req: IncomingMessage, res: ServerResponse, limit: number, onBody: (body: Buffer) => void, onError: (error: Error) => void): void {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return onError(new BodyTooLargeError(limit));
  continueBody(req, res);
  new BodyCollector(req, limit, onBody, onError);
}
