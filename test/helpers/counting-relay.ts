import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';

/** A JSON-RPC call as a relay saw it. */
export interface RelayedCall {
  readonly method: string;
  readonly params: unknown;
}

/**
 * An HTTP relay on a real loopback socket in front of a node: forwards every body unchanged and records
 * the calls it carried, so a test can count what reached the node. `hold()` keeps requests until
 * `release()`, so a test can have calls overlap in flight without timing.
 */
export interface CountingRelay {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Every call carried (batch members one by one). */
  readonly calls: RelayedCall[];
  /** HTTP requests received (a batch request is one). */
  readonly requests: number;
  /** Calls of `method` carried, optionally only those whose params equal `params` (as JSON). */
  count(method: string, params?: unknown): number;
  /** Holds requests from now on, until {@link release}. */
  hold(): void;
  /** Forwards the held requests and stops holding. */
  release(): void;
  /** Requests held now. */
  readonly held: number;
  close(): Promise<void>;
}

/** Starts a {@link CountingRelay} to `target`. */
export async function startCountingRelay(target: string): Promise<CountingRelay> {
  const calls: RelayedCall[] = [];
  let requests = 0;
  let holding = false;
  const held: Array<() => void> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests++;
      const body = Buffer.concat(chunks);
      const parsed = JSON.parse(body.toString('utf8')) as RelayedCall | RelayedCall[];
      for (const call of Array.isArray(parsed) ? parsed : [parsed]) calls.push({ method: call.method, params: call.params });
      const forward = (): void => {
        request(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
          .then(async (answer) => {
            const bytes = Buffer.from(await answer.body.arrayBuffer());
            res.writeHead(answer.statusCode, { 'content-type': 'application/json' }).end(bytes);
          })
          .catch(() => res.writeHead(502).end());
      };
      if (holding) held.push(forward);
      else forward();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    count: (method, params) => calls.filter((c) => c.method === method && (params === undefined || JSON.stringify(c.params) === JSON.stringify(params))).length,
    hold: () => (holding = true),
    release: () => {
      holding = false;
      for (const forward of held.splice(0)) forward();
    },
    get requests() {
      return requests;
    },
    get held() {
      return held.length;
    },
    close: () => new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); }),
  };
}
