import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { MountedGateway } from './mount.js';

/** The Node HTTP servers a gateway started with `listen`, and how to close them. */
export class Servers {
  readonly #servers = new Set<Server>();

  /** Starts a server with `handlers` on `port` and `host`, and resolves with it once it listens. */
  async serve(handlers: MountedGateway, port: number, host: string): Promise<Server> {
    const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => handlers.listener(req, res));
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      if (!handlers.upgrade(req, socket, head)) socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    });
    // No automatic `100 Continue`: a transport sends it (continueBody) once it accepts the body, so a
    // body over the limit is refused before the client sends it.
    server.on('checkContinue', (req, res) => handlers.listener(req, res));
    this.#servers.add(server);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => { server.off('error', reject); resolve(); });
    });
    return server;
  }

  /** Closes every server and the connections still open to it. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.#servers].map((s) => new Promise<void>((resolve) => { s.close(() => resolve()); s.closeAllConnections(); })));
  }
}
