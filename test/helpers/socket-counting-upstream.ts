import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A JSON-RPC node on a real loopback socket that counts the TCP connections open to it (what an
 * upstream pool that was never closed keeps open) and answers every call with `0x2a`, except the request after
 * {@link SocketCountingUpstream.holdNext}, which it holds until {@link SocketCountingUpstream.release}. Idle
 * connections never time out on its side, so a pool left open stays visible.
 */
export interface SocketCountingUpstream {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** TCP connections open to it now. */
  sockets(): number;
  /** Requests held now. */
  held(): number;
  /** Holds the next request. */
  holdNext(): void;
  /** Answers the requests held. */
  release(): void;
  close(): Promise<void>;
}

/** Starts a {@link SocketCountingUpstream} on a free port. */
export async function startSocketCountingUpstream(): Promise<SocketCountingUpstream> {
  let sockets = 0;
  let holding = false;
  const held: Array<() => void> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const call = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: unknown };
      const answer = (): void => {
        const reply = JSON.stringify({ jsonrpc: '2.0', id: call.id, result: '0x2a' });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(reply) }).end(reply);
      };
      if (!holding) return answer();
      holding = false;
      held.push(answer);
    });
  });
  // No idle timeout of its own: only the client (the gateway's pool) closes a connection.
  server.keepAliveTimeout = 0;
  server.on('connection', (socket) => {
    sockets++;
    socket.once('close', () => sockets--);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    sockets: () => sockets,
    held: () => held.length,
    holdNext: () => { holding = true; },
    release() {
      for (const answer of held.splice(0)) answer();
    },
    close: () => new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); }),
  };
}
