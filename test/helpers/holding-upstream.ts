import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A JSON-RPC node on a real loopback socket that answers every method at once except `*_hold`, which it
 * keeps open until the gateway gives up on it (a batch request holding any `*_hold` call is held whole).
 * It counts the requests it received, the calls they carried, and the requests aborted before an
 * answer, so tests can see cancellation reach the node.
 */
export interface HoldingUpstream {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Requests received so far. */
  received(): number;
  /** JSON-RPC calls received so far (a batch request carries several). */
  calls(): number;
  /** Requests whose connection closed before an answer. */
  aborted(): number;
  close(): Promise<void>;
}

/** Starts a {@link HoldingUpstream} on a free port. */
export async function startHoldingUpstream(): Promise<HoldingUpstream> {
  let received = 0;
  let calls = 0;
  let aborted = 0;
  const server: Server = createServer((req, res) => {
    received++;
    res.on('close', () => { if (!res.writableFinished) aborted++; });
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      type Call = { id: unknown; method: string };
      const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Call | Call[];
      const batch = Array.isArray(parsed) ? parsed : [parsed];
      calls += batch.length;
      if (batch.some((call) => call.method.endsWith('_hold'))) return;
      const answers = batch.map((call) => ({ jsonrpc: '2.0', id: call.id, result: '0x1' }));
      const reply = JSON.stringify(Array.isArray(parsed) ? answers : answers[0]);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(reply) });
      res.end(reply);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received: () => received,
    calls: () => calls,
    aborted: () => aborted,
    close: () => new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); }),
  };
}
