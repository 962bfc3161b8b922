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

/** A node whose answers take `delayMs` and carry `padBytes` of result, counting the calls it holds at once (batch items count one each). */
export interface CountingUpstream {
  readonly url: string;
  /** Calls held right now. */
  readonly current: () => number;
  /** Most calls held at once so far. */
  readonly peak: () => number;
  /** Calls answered so far. */
  readonly answered: () => number;
  close(): Promise<void>;
}

/** Starts a {@link CountingUpstream} on a free port. */
export async function startCountingUpstream(delayMs: number, padBytes = 0): Promise<CountingUpstream> {
  let current = 0;
  let peak = 0;
  let answered = 0;
  const result = `0x${'1'.repeat(Math.max(1, padBytes))}`;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400).end();
        return;
      }
      const calls = (Array.isArray(body) ? body : [body]) as Array<{ id?: unknown }>;
      current += calls.length;
      peak = Math.max(peak, current);
      let held = true;
      const release = (): void => {
        if (!held) return;
        held = false;
        current -= calls.length;
      };
      const timer = setTimeout(() => {
        release();
        answered += calls.length;
        const answers = calls.map((c) => ({ jsonrpc: '2.0', id: c.id ?? null, result }));
        const reply = JSON.stringify(Array.isArray(body) ? answers : answers[0]);
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(reply) }).end(reply);
      }, delayMs);
      res.on('close', () => {
        clearTimeout(timer);
        release();
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    current: () => current,
    peak: () => peak,
    answered: () => answered,
    close: () => new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); }),
  };
}

/** Resident memory of process `pid` in MiB (Linux `/proc`). */
export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return kb / 1024;
}
