import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import { promClient } from './peers.js';
import type { GatewayRuntime, Transport } from '../../core/index.js';

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** Serves a Prometheus registry at `GET <path>`, behind a bearer token when one is set. */
export class MetricsTransport implements Transport {
  readonly name = 'metrics';
  readonly #path: string;
  readonly #registry: Registry;
  readonly #token: Buffer | undefined;

  constructor(options: { path: string; registry: Registry; token: string | undefined }) {
    this.#path = options.path;
    this.#registry = options.registry;
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
    // Plugins without a handle on this registry (a store's connection state) export to prom-client's shared one.
    Promise.all([this.#registry.metrics(), promClient.register.metrics()]).then(
      ([own, shared]) => {
        const text = shared === '' ? own : `${own}\n${shared}`;
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
