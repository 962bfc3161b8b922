import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import { promClient } from './peers.js';
import type { GatewayRuntime, Transport } from '../../core/transport-api.js';

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** Serves a Prometheus registry at `GET <path>`, behind a bearer token when one is set. */
export class MetricsTransport implements Transport {
  readonly name = 'metrics';
  /** An operator route: on `server.adminListen` when the config sets one, off the public port. */
  readonly operator = true;
  readonly #path: string;
  readonly #registry: Registry;
  readonly #token: Buffer | undefined;
  readonly #collect: () => Promise<string>;

  /** `collect` gives the text to serve: by default this registry's and prom-client's shared one; a worker's, the whole group's. */
  constructor(options: { path: string; registry: Registry; token: string | undefined; collect?: () => Promise<string> }) {
    this.#path = options.path;
    this.#registry = options.registry;
    this.#collect = options.collect ?? (async () => {
      // Plugins without a handle on this registry (a store's connection state) export to prom-client's shared one.
      const [own, shared] = await Promise.all([options.registry.metrics(), promClient.register.metrics()]);
      return shared === '' ? own : `${own}\n${shared}`;
    });
    this.#token = options.token === undefined ? undefined : digest(options.token);
  }

  handleRequest(req: IncomingMessage, res: ServerResponse, gateway: GatewayRuntime): boolean {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== this.#path) return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('use GET\n');
      return true;
    }
    if (this.#token !== undefined) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
      if (!timingSafeEqual(digest(match?.[1] ?? ''), this.#token) || match === null) {
        res.writeHead(401, { 'www-authenticate': 'Bearer realm="tollgate-metrics"', 'content-type': 'text/plain' }).end('unauthorized\n');
        return true;
      }
    }
    this.#collect().then(
      (text) => {
        res.writeHead(200, { 'content-type': this.#registry.contentType, 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (error: unknown) => {
        gateway.logger.error({ err: error }, 'metrics collection failed');
        res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics collection failed\n');
      },
    );
    return true;
  }
}
