/**
 * The floor any streaming HTTP relay in Node pays: node:http in, an undici keep-alive Pool out, the
 * upstream's body piped to the client as it arrives (`stream.pipeline`, backpressure both ways). No
 * auth, no metering, no trailer: whatever the gateway's file-storage API costs above this is its own.
 */
import { createServer } from 'node:http';
import { pipeline } from 'node:stream';
import { Pool } from 'undici';
import { listenBeside, type BareProxy } from './bare-proxy.js';

/** Starts the bare streaming proxy in front of `upstream` (its origin; the client's path is kept). */
export async function startBareStreamProxy(upstream: string): Promise<BareProxy> {
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
  return listenBeside(server, pool, 0, '127.0.0.1');
}
