/**
 * The off-the-shelf reference: fastify 5 with @fastify/http-proxy (undici underneath) as a plain reverse
 * proxy, with its defaults except for the upstream pool size, set like the gateway's.
 */
import Fastify from 'fastify';
import proxy from '@fastify/http-proxy';
import type { AddressInfo } from 'node:net';

/** Options of {@link startFastifyProxy}. */
export interface FastifyProxyOptions {
  /** The upstream's base URL. */
  readonly upstream: string;
  /** Keep-alive connections to the upstream (default 64). */
  readonly connections?: number;
  /** Port (default 0: a free one). */
  readonly port?: number;
  /** Interface (default 127.0.0.1). */
  readonly host?: string;
}

/** A running fastify proxy. */
export interface FastifyProxy {
  readonly port: number;
  close(): Promise<void>;
}

/** Starts the fastify reverse proxy. */
export async function startFastifyProxy(options: FastifyProxyOptions): Promise<FastifyProxy> {
  const app = Fastify({ logger: false, keepAliveTimeout: 65_000 });
  await app.register(proxy, {
    upstream: options.upstream,
    undici: { connections: options.connections ?? 64, pipelining: 1, keepAliveTimeout: 30_000 },
  });
  await app.listen({ port: options.port ?? 0, host: options.host ?? '127.0.0.1' });
  return {
    port: (app.server.address() as AddressInfo).port,
    async close() {
      await app.close();
    },
  };
}
