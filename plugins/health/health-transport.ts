import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GatewayRuntime, Transport } from '../../core/transport-api.js';
import { checkReadiness, type Readiness } from './readiness.js';

/** Where the probes are served and how long readiness waits for each dependency. */
export interface HealthSettings {
  /** Liveness path (default `/healthz`). */
  readonly livenessPath: string;
  /** Readiness path (default `/readyz`). */
  readonly readinessPath: string;
  /** How long each readiness check (the store, one network) may take, ms (default 2000). */
  readonly timeoutMs: number;
}

function reply(res: ServerResponse, status: number, body: unknown, head: boolean): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(head ? undefined : `${JSON.stringify(body)}\n`);
}

/**
 * Serves `GET /healthz` (the process is up and answering: always 200) and `GET /readyz` (200 when the
 * store answers and every network has a node that answers, else 503 naming what does not), for load
 * balancers and Kubernetes probes. No credentials: the answers name networks, never upstream URLs or keys.
 */
export class HealthTransport implements Transport {
  readonly name = 'health';
  readonly #settings: HealthSettings;
  // Probes arriving while a check runs share it, so a burst of probes costs one check.
  #inFlight: Promise<Readiness> | undefined;

  constructor(settings: HealthSettings) {
    this.#settings = settings;
  }

  handleRequest(req: IncomingMessage, res: ServerResponse, gateway: GatewayRuntime): boolean {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== this.#settings.livenessPath && path !== this.#settings.readinessPath) return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('use GET\n');
      return true;
    }
    const head = req.method === 'HEAD';
    if (path === this.#settings.livenessPath) {
      reply(res, 200, { status: 'ok' }, head);
      return true;
    }
    this.#inFlight ??= checkReadiness(gateway, this.#settings.timeoutMs).finally(() => (this.#inFlight = undefined));
    this.#inFlight.then(
      (readiness) => reply(res, readiness.ready ? 200 : 503, readiness, head),
      (error: unknown) => {
        gateway.logger.error({ err: error }, 'readiness check failed');
        reply(res, 503, { ready: false }, head);
      },
    );
    return true;
  }
}
