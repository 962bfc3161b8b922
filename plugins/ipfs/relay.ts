import type { ServerResponse } from 'node:http';

/** The trailer kubo uses to report an error after a streamed answer began (the status is already 200). */
export const STREAM_ERROR_TRAILER = 'X-Stream-Error';

/** Bytes a relay lets wait for a slow client before it pauses the upstream (per stream: memory stays bounded). */
export const RELAY_WINDOW = 1 << 20;

/** How a relayed stream ended. */
export interface RelayOutcome {
  /** Bytes written to the client. */
  readonly bytes: number;
  /** The error that ended it early: the upstream's (then reported in the trailer) or the client's going away. */
  readonly error?: Error;
  /** True when the client went away before the end. */
  readonly clientGone: boolean;
}

function trailerValue(message: string): string {
  // A header value cannot hold control characters; keep it to one printable line.
  const line = message.replace(/[\x00-\x1f\x7f]+/g, ' ').trim();
  return line === '' ? 'stream failed' : line.slice(0, 1024);
}

/**
 * Copies a streamed upstream body to the client with backpressure both ways: the upstream is paused
 * while more than `window` bytes wait for the client's socket, and the client's going away destroys the
 * upstream body (ending the upstream request). When the upstream fails after the answer began, the error goes into the
 * `X-Stream-Error` trailer (the response must have declared `Trailer: X-Stream-Error` and be chunked),
 * as kubo does; so does an `X-Stream-Error` trailer the upstream itself sent, read from `trailers()`
 * once the body ended. Resolves once the response is finished or abandoned; never rejects.
 */
export function relay(
  body: NodeJS.ReadableStream,
  res: ServerResponse,
  trailers?: () => Readonly<Record<string, string | string[] | undefined>> | undefined,
  window = RELAY_WINDOW,
): Promise<RelayOutcome> {
  const source = body as NodeJS.ReadableStream & { destroy?: (error?: Error) => void; destroyed?: boolean };
  return new Promise((resolve) => {
    let bytes = 0;
    let settled = false;
    // Chunks that arrive in one turn of the event loop (each socket read of the upstream is one) go out
    // in one write: the response stays corked until the loop's check phase, so the client's socket gets
    // one `writev` and one HTTP chunk per burst instead of one per read.
    let corked = false;
    const flush = (): void => {
      if (!corked) return;
      corked = false;
      res.uncork();
    };
    const settle = (outcome: Omit<RelayOutcome, 'bytes'>): void => {
      if (settled) return;
      settled = true;
      flush();
      source.off('data', onData);
      source.off('end', onEnd);
      source.off('error', onError);
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve({ bytes, ...outcome });
    };
    const onData = (chunk: Buffer | string): void => {
      bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
      if (!corked) {
        corked = true;
        res.cork();
        setImmediate(flush);
      }
      res.write(chunk);
      // Up to `window` bytes may wait for the client's socket, so the upstream keeps streaming while the
      // client catches up (a 16 KiB window stalls both sides on every chunk); beyond it, the upstream pauses.
      if (res.writableLength >= window) source.pause();
    };
    const onDrain = (): void => {
      source.resume();
    };
    const finish = (message: string | undefined, error?: Error): void => {
      flush();
      if (message !== undefined && !res.headersSent) res.setHeader('trailer', STREAM_ERROR_TRAILER);
      if (message !== undefined) res.addTrailers({ [STREAM_ERROR_TRAILER]: trailerValue(message) });
      res.end();
      settle({ error, clientGone: false });
    };
    const onEnd = (): void => {
      const sent = trailers?.()?.['x-stream-error'];
      const message = Array.isArray(sent) ? sent[0] : sent;
      finish(message === undefined || message === '' ? undefined : message);
    };
    const onError = (error: Error): void => {
      if (res.destroyed) {
        settle({ error, clientGone: true });
        return;
      }
      finish(error.message || String(error), error);
    };
    const onClose = (): void => {
      if (res.writableFinished) return;
      // The client went away: stop reading, which aborts the upstream request.
      source.destroy?.();
      settle({ error: new Error('the client went away'), clientGone: true });
    };
    // Errors after the outcome is settled (an abort racing the end) must not go unhandled.
    source.on('error', () => {});
    source.on('data', onData);
    source.once('end', onEnd);
    source.once('error', onError);
    res.on('drain', onDrain);
    res.once('close', onClose);
  });
}
