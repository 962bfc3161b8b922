import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A JSON-RPC node on a real loopback socket that answers every method at once except `*_hold`, which it
 * holds until told ({@link HoldingUpstream.release}) or until the gateway gives up on it (a batch request
 * holding any `*_hold` call is held whole). It counts the requests it received, the calls they carried,
 * the requests held and those aborted before an answer, so tests can see cancellation reach the node.
 */
export interface HoldingUpstream {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Requests received so far. */
  received(): number;
  /** JSON-RPC calls received so far (a batch request carries several). */
  calls(): number;
  /** Requests held now (received, neither answered nor aborted). */
  held(): number;
  /** Requests whose connection closed before an answer. */
  aborted(): number;
  /** Answers every request held now (`0x1` to each call). */
  release(): void;
  close(): Promise<void>;
}

/** Starts a {@link HoldingUpstream} on a free port. */
export async function startHoldingUpstream(): Promise<HoldingUpstream> {
  let received = 0;
  let calls = 0;
  let aborted = 0;
  const held = new Set<() => void>();
  type Call = { id: unknown; method: string };
  const answer = (res: ServerResponse, parsed: Call | Call[]): void => {
    const batch = Array.isArray(parsed) ? parsed : [parsed];
    const answers = batch.map((call) => ({ jsonrpc: '2.0', id: call.id, result: '0x1' }));
    const reply = JSON.stringify(Array.isArray(parsed) ? answers : answers[0]);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(reply) });
    res.end(reply);
  };
  const server: Server = createServer((req, res) => {
    received++;
    res.on('close', () => { if (!res.writableFinished) aborted++; });
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Call | Call[];
      const batch = Array.isArray(parsed) ? parsed : [parsed];
      calls += batch.length;
      if (!batch.some((call) => call.method.endsWith('_hold'))) return answer(res, parsed);
      const release = (): void => answer(res, parsed);
      held.add(release);
      res.on('close', () => held.delete(release));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received: () => received,
    calls: () => calls,
    held: () => held.size,
    aborted: () => aborted,
    release() {
      const waiting = [...held];
      held.clear();
      for (const release of waiting) release();
    },
    close: () => new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); }),
  };
}
