import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { rpc } from '../helpers/json-rpc.js';

/** A node that fails every call with HTTP 500 after `delayMs`: each call it gets is charged, then refunded. */
export async function startFailingUpstream(delayMs: number): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const timer = setTimeout(() => res.writeHead(500, { 'content-type': 'text/plain' }).end('node failure'), delayMs);
      res.on('close', () => clearTimeout(timer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); }),
  };
}

/** What a load run saw: every answer, by whether its result reached the client. */
export interface Tally {
  /** Calls answered with a result (the client read it): the calls that may be charged. */
  delivered: number;
  /** Calls answered at all (any status). */
  answered: number;
  /** Answers by HTTP status. */
  readonly statuses: Map<number, number>;
  /** Requests that got no HTTP answer (a transport error). */
  transportErrors: number;
}

/** Sends `eth_blockNumber` calls over HTTP from `workers` loops per URL until `stop()` is called. */
export function httpLoad(urls: readonly string[], workers: number): { tally: Tally; stop(): Promise<Tally> } {
  const agent = new Agent({ connections: workers * urls.length });
  const tally: Tally = { delivered: 0, answered: 0, statuses: new Map(), transportErrors: 0 };
  const body = JSON.stringify(rpc('eth_blockNumber', []));
  let stopping = false;
  const loop = async (url: string): Promise<void> => {
    while (!stopping) {
      try {
        const res = await request(url, { method: 'POST', body, headers: { 'content-type': 'application/json' }, dispatcher: agent });
        const text = await res.body.text();
        tally.answered++;
        tally.statuses.set(res.statusCode, (tally.statuses.get(res.statusCode) ?? 0) + 1);
        if (res.statusCode === 200 && text.includes('"result"')) tally.delivered++;
      } catch {
        tally.transportErrors++;
      }
    }
  };
  const running = Promise.all(urls.flatMap((url) => Array.from({ length: workers }, () => loop(url))));
  return {
    tally,
    async stop() {
      stopping = true;
      await running;
      await agent.close();
      return tally;
    },
  };
}

/** Polls `read` until `done` holds, or fails after `timeoutMs` naming `what` and the last value. */
export async function until<T>(read: () => T | Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Prints one line a reader of the test output can compare across runs. */
export function report(fault: string, figures: Record<string, number | string>): void {
  console.log(`[fault] ${fault}: ${Object.entries(figures).map(([k, v]) => `${k}=${v}`).join(' ')}`);
}

/** Resident memory of process `pid` in MiB (Linux `/proc`). */
export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return kb / 1024;
}
