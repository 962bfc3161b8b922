import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RecordedExchange } from './fixtures.js';

/** A JSON-RPC server on a real socket that answers each recorded request with its recorded response. */
export interface ReplayUpstream {
  readonly url: string;
  /** Requests received, as parsed bodies. */
  readonly received: unknown[];
  close(): Promise<void>;
}

function keyOf(method: unknown, params: unknown): string {
  return JSON.stringify([method, params ?? []]);
}

/** Starts a replay upstream for `exchanges` on a free loopback port. */
export async function startReplayUpstream(exchanges: readonly RecordedExchange[]): Promise<ReplayUpstream> {
  const recordings = new Map<string, Record<string, unknown>>();
  for (const e of exchanges) recordings.set(keyOf(e.request.method, e.request.params), e.response);
  const received: unknown[] = [];
  const answer = (request: { id?: unknown; method?: unknown; params?: unknown }): Record<string, unknown> => {
    const recorded = recordings.get(keyOf(request.method, request.params));
    if (recorded === undefined) return { jsonrpc: '2.0', id: request.id ?? null, error: { code: -32601, message: 'no recording for this request' } };
    return { ...recorded, id: request.id ?? null };
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
      received.push(body);
      const reply = Array.isArray(body) ? body.map(answer) : answer(body as Record<string, unknown>);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); }),
  };
}
