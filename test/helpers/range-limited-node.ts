import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';

/** What a {@link RangeLimitedNode} does with an `eth_getLogs` wider than its limit: answer this error, as a provider does. */
export interface RangeLimitedOptions {
  /** Widest block range served, in blocks (inclusive range: `toBlock - fromBlock + 1`). */
  readonly maxBlockRange: number;
  /** The error object a wider query gets (each provider has its own words). */
  readonly error: { readonly code: number; readonly message: string };
  /** Delay before each `eth_getLogs` is answered, in ms (for concurrency and time-limit tests). */
  readonly delayMs?: number;
}

/** A JSON-RPC node in front of another (Anvil) that refuses `eth_getLogs` ranges wider than a limit, as hosted providers do. */
export interface RangeLimitedNode {
  readonly url: string;
  /** The block ranges of the `eth_getLogs` queries answered with logs, in arrival order. */
  readonly served: Array<{ from: number; to: number }>;
  /** How many `eth_getLogs` were refused for their width. */
  readonly refused: number;
  /** The most `eth_getLogs` queries in flight at once. */
  readonly maxInFlight: number;
  close(): Promise<void>;
}

async function call(target: string, method: string, params: unknown[]): Promise<unknown> {
  const res = await request(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return ((await res.body.json()) as { result: unknown }).result;
}

/** Starts a {@link RangeLimitedNode} forwarding to `target` on a free loopback port. */
export async function startRangeLimitedNode(target: string, options: RangeLimitedOptions): Promise<RangeLimitedNode> {
  const served: Array<{ from: number; to: number }> = [];
  let refused = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  const blockOf = async (tag: unknown): Promise<number> => {
    if (tag === undefined || tag === null || tag === 'latest' || tag === 'pending' || tag === 'safe' || tag === 'finalized') return Number(await call(target, 'eth_blockNumber', []));
    if (tag === 'earliest') return 0;
    return Number(tag);
  };
  const answer = async (body: Buffer): Promise<Buffer> => {
    const parsed = JSON.parse(body.toString('utf8')) as { id: unknown; method: string; params?: Array<Record<string, unknown>> };
    if (parsed.method === 'eth_getLogs' && parsed.params?.[0]?.blockHash === undefined) {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      try {
        if (options.delayMs !== undefined) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
        const from = await blockOf(parsed.params?.[0]?.fromBlock);
        const to = await blockOf(parsed.params?.[0]?.toBlock);
        if (to - from + 1 > options.maxBlockRange) {
          refused++;
          return Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: parsed.id, error: options.error }));
        }
        served.push({ from, to });
      } finally {
        inFlight--;
      }
    }
    const res = await request(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    return Buffer.from(await res.body.arrayBuffer());
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      answer(Buffer.concat(chunks))
        .then((bytes) => res.writeHead(200, { 'content-type': 'application/json' }).end(bytes))
        .catch(() => res.writeHead(502).end());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    served,
    get refused() {
      return refused;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    close: () => new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); }),
  };
}
