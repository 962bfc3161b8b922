/**
 * The floor any streaming HTTP relay in Node pays: node:http in, an undici keep-alive Pool out, the
 * upstream's body piped to the client as it arrives (`stream.pipeline`, backpressure both ways). No
 * auth, no metering, no trailer: whatever the gateway's file-storage API costs above this is its own.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream';
import { Pool } from 'undici';

/** A running bare streaming proxy. */
export interface BareStreamProxy {
  readonly server: Server;
  readonly port: number;
  close(): Promise<void>;
}

/** Starts the bare streaming proxy in front of `upstream` (its origin; the client's path is kept). */
export async function startBareStreamProxy(upstream: string): Promise<BareStreamProxy> {
  const pool = new Pool(new URL(upstream).origin, { connections: 8, pipelining: 1, keepAliveTimeout: 30_000 });
  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    req.resume();
    req.once('end', () => {
      pool
        .request({ path: req.url ?? '/', method: 'POST', headers: { 'content-type': req.headers['content-type'] ?? 'application/octet-stream' } })
        .then((response) => {
          const type = response.headers['content-type'];
          res.writeHead(response.statusCode, { 'content-type': typeof type === 'string' ? type : 'application/octet-stream' });
          pipeline(response.body, res, () => undefined);
        })
        .catch(() => {
          if (res.headersSent) return void res.destroy();
          res.writeHead(502).end();
        });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await pool.close();
    },
  };
}
