import type { IncomingMessage, ServerResponse } from 'node:http';

/** Bytes of a refused body read and thrown away, at most, so the client can read the refusal. */
export const MAX_DRAIN_BYTES = 64 * 1024 * 1024;
/** How long a refused body is drained, at most. */
export const DRAIN_TIMEOUT_MS = 10_000;

/** Whether the client waits for `100 Continue` before it sends the body. */
export function expectsContinue(req: IncomingMessage): boolean {
  return req.headers.expect?.toLowerCase() === '100-continue';
}

/**
 * Tells a client that waits for `100 Continue` to send its body (a no-op for any other request). The
 * gateway's server does not send it by itself, so a body can be refused before the client sends it.
 */
export function continueBody(req: IncomingMessage, res: ServerResponse): void {
  if (!expectsContinue(req) || res.headersSent || continued.has(res)) return;
  continued.add(res);
  res.writeContinue();
}

/** Responses that told their client to send the body. */
const continued = new WeakSet<ServerResponse>();

/**
 * Answers a request whose body is refused (too large) so that a client still writing can read the
 * answer: the answer goes out at once with `Connection: close`, the rest of the body is read and thrown
 * away (at most 64 MiB (`MAX_DRAIN_BYTES`) for at most 10 s (`DRAIN_TIMEOUT_MS`); past that the connection is
 * cut), and only then is the connection closed. Closing while unread bytes arrive would reset it, and a
 * client still writing would see `EPIPE` instead of the answer.
 */
export function refuseBody(req: IncomingMessage, res: ServerResponse, status: number, headers: Record<string, string>, body: string): void {
  res.writeHead(status, { ...headers, connection: 'close', 'content-length': String(Buffer.byteLength(body)) });
  // A client waiting for `100 Continue` never got it: it has no body to send.
  if (req.readableEnded || (expectsContinue(req) && !continued.has(res))) {
    res.end(body);
    return;
  }
  res.write(body);
  let drained = 0;
  const cut = (): void => {
    clearTimeout(timer);
    req.socket.destroy();
  };
  const timer = setTimeout(cut, DRAIN_TIMEOUT_MS);
  timer.unref();
  req.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > MAX_DRAIN_BYTES) cut();
  });
  req.once('end', () => {
    clearTimeout(timer);
    res.end();
  });
  req.once('error', cut);
  req.resume();
}
