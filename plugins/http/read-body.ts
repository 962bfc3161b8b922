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

/** One request's body as it arrives, kept on the request itself (see {@link collectBody}). */
interface Collecting {
  readonly chunks: Buffer[];
  size: number;
  readonly limit: number;
  readonly onBody: (body: Buffer) => void;
  readonly onError: (error: Error) => void;
  /** The body was handed over or refused: later events are ignored. */
  done: boolean;
}

const COLLECTING = Symbol('tollgate.collecting');
type CollectingRequest = IncomingMessage & { [COLLECTING]?: Collecting };

// The listeners are the same functions for every request (the emitter calls them with the request as
// `this`), so reading a body makes no closures; they stay attached once the body is in or refused, made
// no-ops by a flag, which spares three removals a request (a request emits no 'data' after 'end').
function onData(this: CollectingRequest, chunk: Buffer): void {
  const state = this[COLLECTING]!;
  if (state.done) return;
  state.size += chunk.length;
  if (state.size > state.limit) {
    // The caller refuses the request and drains what is left of the body.
    state.done = true;
    state.onError(new BodyTooLargeError(state.limit));
    return;
  }
  state.chunks.push(chunk);
}

function onEnd(this: CollectingRequest): void {
  const state = this[COLLECTING]!;
  if (state.done) return;
  state.done = true;
  state.onBody(state.chunks.length === 1 ? state.chunks[0]! : Buffer.concat(state.chunks, state.size));
}

function onRequestError(this: CollectingRequest, error: Error): void {
  const state = this[COLLECTING]!;
  if (state.done) return;
  state.done = true;
  state.onError(error);
}

/**
 * Reads a request body into one buffer, refusing as soon as it grows past `limit` bytes (so an oversized
 * body is never held in memory whole): `onBody` or `onError` is called once. A declared length over the
 * limit is refused at once, with a {@link BodyTooLargeError}, before anything is read and before a client
 * that asked for it is told to send its body (`100 Continue`). Callbacks, not a promise: a promise and a
 * microtask less per request.
 */
export function collectBody(req: IncomingMessage, res: ServerResponse, limit: number, onBody: (body: Buffer) => void, onError: (error: Error) => void): void {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return onError(new BodyTooLargeError(limit));
  continueBody(req, res);
  const request = req as CollectingRequest;
  request[COLLECTING] = { chunks: [], size: 0, limit, onBody, onError, done: false };
  request.on('data', onData);
  request.on('end', onEnd);
  request.on('error', onRequestError);
}
