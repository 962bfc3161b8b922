import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A tiny kubo stand-in on a loopback port, answering `cat` however a test needs. */
export interface KuboStub {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Requests seen, by path and query. */
  readonly requests: string[];
  close(): Promise<void>;
}

/** Starts a server whose `handler` answers every request (the socket is tracked and destroyed on close). */
export async function startKuboStub(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<KuboStub> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(req.url ?? '');
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** kubo's headers of a `cat` answer. */
export const CAT_HEADERS = {
  'content-type': 'text/plain',
  'x-stream-output': '1',
  trailer: 'X-Stream-Error',
  'access-control-expose-headers': 'X-Stream-Output, X-Chunked-Output, X-Content-Length',
};

const PATTERN_BYTES = 1 << 20;
let pattern: Buffer | undefined;

/** Chunk `n` (64 KiB) of a deterministic byte stream: slices of a fixed 1 MiB pseudo-random pattern at shifting offsets. */
export function patternChunk(n: number): Buffer {
  if (pattern === undefined) {
    pattern = Buffer.alloc(PATTERN_BYTES + 65_536);
    for (let o = 0, i = 0; o < pattern.length; o += 32, i++) createHash('sha256').update(`tollgate-pattern:${i}`).digest().copy(pattern, o);
  }
  const start = (n * 7919 * 64) % PATTERN_BYTES;
  return pattern.subarray(start, start + 65_536);
}

/** The SHA-256 of the first `chunks` chunks of the pattern stream, computed without holding them. */
export function patternDigest(chunks: number): string {
  const hash = createHash('sha256');
  for (let n = 0; n < chunks; n++) hash.update(patternChunk(n));
  return hash.digest('hex');
}

/**
 * Writes `chunks` pattern chunks to `res`, honouring backpressure; resolves with the bytes written, or
 * early when the client goes away (`closed` true).
 */
export async function writePattern(res: ServerResponse, chunks: number, onChunk?: (written: number) => void): Promise<{ written: number; closed: boolean }> {
  let written = 0;
  for (let n = 0; n < chunks; n++) {
    if (res.destroyed) return { written, closed: true };
    const chunk = patternChunk(n);
    written += chunk.length;
    onChunk?.(written);
    if (!res.write(chunk)) {
      const closed = await new Promise<boolean>((resolve) => {
        const drain = (): void => { res.off('close', close); resolve(false); };
        const close = (): void => { res.off('drain', drain); resolve(true); };
        res.once('drain', drain);
        res.once('close', close);
      });
      if (closed) return { written, closed: true };
    }
  }
  return { written, closed: false };
}
