import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import type { UpstreamStatus } from '../../core/upstream-api.js';
import type { FailoverSelector } from '../../core/upstream/failover-selector.js';

/**
 * How a {@link ChaosUpstream} behaves: `forward` passes every request to its node and the answer back
 * (a healthy upstream); the others misbehave as real upstreams do.
 */
export type ChaosMode =
  | 'forward' // a healthy node
  | 'echo' // a healthy node of its own: answers every call with result "0x1"
  | 'http-401' // refuses the gateway's credentials with a JSON-RPC body
  | 'hang' // accepts the connection and the request, never answers
  | 'http-500' // answers HTTP 500 with a text body
  | 'http-429' // answers HTTP 429 with a JSON-RPC rate-limit body
  | 'capacity' // answers HTTP 200 with the provider's -32005 "limit exceeded"
  | 'node-error' // answers HTTP 200 with the node's own error for the call (-32000 "header not found")
  | 'die'; // reads the request, then drops the connection (the node died mid-request)

/** A real HTTP server on loopback in front of a node, misbehaving on demand. */
export interface ChaosUpstream {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** What it does with the next request. */
  mode: ChaosMode;
  /** The JSON-RPC method of every request received, in order. */
  readonly received: string[];
  /** Closes it, dropping hung connections. */
  close(): Promise<void>;
}

/** Starts a chaos upstream forwarding to `target` (a node's URL) when in `forward` mode. */
export async function startChaosUpstream(target: string | undefined, mode: ChaosMode = 'forward'): Promise<ChaosUpstream> {
  const pool = target === undefined ? undefined : new Pool(target, { connections: 16 });
  const received: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      let method = '?';
      let id: unknown = null;
      try {
        const parsed = JSON.parse(body.toString('utf8')) as { method?: string; id?: unknown };
        method = parsed.method ?? '?';
        id = parsed.id ?? null;
      } catch { /* not JSON: recorded as '?' */ }
      received.push(method);
      switch (chaos.mode) {
        case 'hang':
          return; // the socket stays open until the server closes
        case 'die':
          req.socket.destroy();
          return;
        case 'echo':
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jsonrpc: '2.0', id, result: '0x1' }));
          return;
        case 'http-401':
          res.writeHead(401, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32002, message: 'invalid project id' } }));
          return;
        case 'http-500':
          res.writeHead(500, { 'content-type': 'text/plain' });
          res.end('internal server error');
          return;
        case 'http-429':
          res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' });
          res.end(JSON.stringify({ jsonrpc: '2.0', id, error: { code: 429, message: 'Too Many Requests' } }));
          return;
        case 'capacity':
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32005, message: 'limit exceeded' } }));
          return;
        case 'node-error':
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32000, message: 'header not found' } }));
          return;
        case 'forward':
          if (pool === undefined) {
            res.writeHead(502).end();
            return;
          }
          pool.request({ path: '/', method: 'POST', headers: { 'content-type': 'application/json' }, body }).then(
            async (answer) => {
              const bytes = Buffer.from(await answer.body.arrayBuffer());
              res.writeHead(answer.statusCode, { 'content-type': 'application/json' });
              res.end(bytes);
            },
            () => res.socket?.destroy(),
          );
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const chaos: ChaosUpstream = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    mode,
    received,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await pool?.close();
    },
  };
  return chaos;
}

export { until } from './until.js';

/** The breaker and counters of one upstream, from the selector's status. */
export interface UpstreamView {
  readonly status: UpstreamStatus;
  readonly breaker: { state: string; opened: number; halfOpened: number; closed: number; consecutiveFailures: number };
  readonly counters: { attempts: number; retries: number; failovers: number; successes: number; failures: number; probes: number; probeFailures: number };
  readonly head: number | null;
  readonly lag: number | null;
  readonly lagging: boolean;
}

/** The status of upstream `name` of `network`. */
export function upstreamView(selector: FailoverSelector, network: string, name: string): UpstreamView {
  const status = selector.status().find((s) => s.network === network && s.name === name);
  if (status === undefined) throw new Error(`no upstream ${name} in ${network}`);
  const d = status.details as unknown as Omit<UpstreamView, 'status'>;
  return { status, breaker: d.breaker, counters: d.counters, head: d.head, lag: d.lag, lagging: d.lagging };
}
