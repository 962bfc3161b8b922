/**
 * The floor any HTTP proxy in Node pays: node:http in, an undici keep-alive Pool out. It buffers the
 * request body, forwards it, buffers the upstream's answer and writes the same bytes back. No parsing,
 * no routing, no auth: whatever the gateway costs above this is the price of its pipeline.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';

/** Options of {@link startBareProxy}. */
export interface BareProxyOptions {
  /** The upstream's base URL; its path is prefixed to the client's path. */
  readonly upstream: string;
  /** Keep-alive connections to the upstream (default 64, as the gateway's default pool). */
  readonly connections?: number;
  /** Port (default 0: a free one). */
  readonly port?: number;
  /** Interface (default 127.0.0.1). */
  readonly host?: string;
}

/** A running bare proxy. */
export interface BareProxy {
  readonly server: Server;
  readonly port: number;
  close(): Promise<void>;
}

/** Starts the bare pass-through proxy. */
export async function startBareProxy(options: BareProxyOptions): Promise<BareProxy> {
  const upstream = new URL(options.upstream);
  const base = upstream.pathname === '/' ? '' : upstream.pathname.replace(/\/$/, '');
  const pool = new Pool(upstream.origin, { connections: options.connections ?? 64, pipelining: 1, keepAliveTimeout: 30_000 });

  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      pool
        .request({
          path: base + (req.url ?? '/'),
          method: req.method === 'GET' ? 'GET' : 'POST',
          headers: { 'content-type': req.headers['content-type'] ?? 'application/json' },
          body: req.method === 'GET' ? null : body,
        })
        .then(async (response) => {
          const answer = Buffer.from(await response.body.arrayBuffer());
          const type = response.headers['content-type'];
          res.writeHead(response.statusCode, {
            'content-type': typeof type === 'string' ? type : 'application/json',
            'content-length': answer.length,
          });
          res.end(answer);
        })
        .catch(() => {
          if (res.headersSent) return void res.destroy();
          res.writeHead(502, { 'content-type': 'application/json' });
          res.end('{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"bad gateway"}}');
        });
    });
  });

  return listenBeside(server, pool, options.port ?? 0, options.host ?? '127.0.0.1');
}

/** Starts `server` listening; its `close` ends the server's connections, then `pool`'s (when it has one). */
export async function listenBeside(server: Server, pool: Pool | undefined, port: number, host: string): Promise<BareProxy> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await pool?.close();
    },
  };
}
