/**
 * The floor a WebSocket JSON-RPC proxy in Node pays when it reaches its node over HTTP, as the gateway
 * does: `ws` in, every message forwarded as is through an undici keep-alive Pool, the node's bytes sent
 * back on the socket. No parsing, no auth, no metering: whatever the gateway costs above this is the
 * price of its pipeline.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { WebSocketServer, type RawData } from 'ws';

/** Options of {@link startBareWsProxy}. */
export interface BareWsProxyOptions {
  /** The node's HTTP URL. */
  readonly upstream: string;
  /** Keep-alive connections to the node (default 64, as the gateway's default pool). */
  readonly connections?: number;
}

/** A running bare WebSocket proxy. */
export interface BareWsProxy {
  readonly server: Server;
  readonly port: number;
  close(): Promise<void>;
}

const ERROR = '{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"bad gateway"}}';

/** Starts the bare WebSocket relay on a free loopback port. */
export async function startBareWsProxy(options: BareWsProxyOptions): Promise<BareWsProxy> {
  const upstream = new URL(options.upstream);
  const path = upstream.pathname;
  const pool = new Pool(upstream.origin, { connections: options.connections ?? 64, pipelining: 1, keepAliveTimeout: 30_000 });
  const server = createServer((_req, res) => res.writeHead(426).end());
  const wss = new WebSocketServer({ server, perMessageDeflate: false });
  wss.on('connection', (socket) => {
    socket.on('message', (data: RawData) => {
      const body = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
      pool
        .request({ path, method: 'POST', headers: { 'content-type': 'application/json' }, body })
        .then(async (response) => socket.send(Buffer.from(await response.body.arrayBuffer())))
        .catch(() => socket.send(ERROR));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server,
    port: (server.address() as AddressInfo).port,
    async close() {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.close();
    },
  };
}
