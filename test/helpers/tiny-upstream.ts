import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A minimal JSON-RPC node on a real loopback socket: answers every call with `result: "0x1"`. */
export interface TinyUpstream {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Calls answered so far. */
  readonly answered: () => number;
  close(): Promise<void>;
}

/** Starts a {@link TinyUpstream} on a free port. */
export async function startTinyUpstream(): Promise<TinyUpstream> {
  let answered = 0;
  const answer = (call: { id?: unknown }): unknown => {
    answered++;
    return { jsonrpc: '2.0', id: call.id ?? null, result: '0x1' };
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400).end();
        return;
      }
      const reply = JSON.stringify(Array.isArray(body) ? body.map((c) => answer(c as { id?: unknown })) : answer(body as { id?: unknown }));
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(reply) });
      res.end(reply);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    answered: () => answered,
    close: () => new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); }),
  };
}
