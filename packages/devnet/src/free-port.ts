import { createServer } from 'node:net';

/**
 * Asks the OS for a TCP port that is free right now on `host`: listens on port 0, reads the port and
 * closes. Another process may still take it before it is used, so callers retry on `EADDRINUSE`.
 */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('could not read the free port'))));
    });
  });
}
