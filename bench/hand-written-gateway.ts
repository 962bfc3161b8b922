/**
 * The least a metered JSON-RPC proxy does per call, written by hand in one function: what the spec's
 * per-call work costs without a framework around it. It parses the call, checks its method against a
 * table of credit prices and its params for an array, takes the credits from the key's balance in a
 * counter, forwards the client's bytes over an undici keep-alive `Pool` (the dispatch API, no stream per
 * answer), reads a block answer's `number` for the head (a native search, no parse), gives the credits
 * back for a node's error, and writes the node's bytes back. It is no gateway: no schemas, limits,
 * failover, head floor, usage, batches or WebSocket. Set beside the bare proxy and the gateway in one
 * run, it splits the gateway's cost into the spec's own work (this target) and the framework's (the rest).
 *
 * With `cache`, it also answers from memory: the `result` bytes of a call's first answer are kept under
 * its method and params, and every later call of them is parsed, checked, charged and answered with
 * those bytes around the client's id, as the gateway's response cache answers a hit (the same envelope),
 * without the upstream hop: what a hit costs without a framework.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Pool, type Dispatcher } from 'undici';
import type { JsonRpcId } from '../core/index.js';
import { listenBeside, type BareProxy } from './bare-proxy.js';
// The response cache's own envelope and answer reader: a hit by hand is wrapped exactly as the gateway's.
import { answerMember, envelope } from '../plugins/cache/envelope.js';

/** Options of {@link startHandWrittenGateway}. */
export interface HandWrittenGatewayOptions {
  /** The upstream's URL (every call goes to it). */
  readonly upstream: string;
  /** The API key the path must carry (`/<network>/v3/<key>`). */
  readonly key: string;
  /** Credits per method: the methods served. */
  readonly prices: Readonly<Record<string, number>>;
  /** Keep-alive connections to the upstream (default 64). */
  readonly connections?: number;
  /** Answer a call whose method and params were answered before from memory (default false). */
  readonly cache?: boolean;
}

const HEADERS = { 'content-type': 'application/json' };
const NUMBER = Buffer.from('"number":"');
const ERROR = Buffer.from('rror"');

/** The node's answer to one call, gathered from the dispatcher. */
class Answer implements Dispatcher.DispatchHandler {
  #status = 0;
  #chunks: Buffer[] = [];
  constructor(readonly done: (status: number, body: Buffer) => void) {}
  // undici takes a handler with onRequestStart for one of its current API.
  onRequestStart(): void {}
  onResponseStart(_controller: Dispatcher.DispatchController, status: number): void {
    this.#status = status;
  }
  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#chunks.push(chunk);
  }
  onResponseEnd(): void {
    this.done(this.#status, this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks));
  }
  onResponseError(): void {
    this.done(502, Buffer.from('{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"bad gateway"}}'));
  }
}

function send(res: ServerResponse, status: number, body: Buffer): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': body.length });
  res.end(body);
}

function refuse(res: ServerResponse, status: number): void {
  res.writeHead(status, HEADERS);
  res.end('{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"refused"}}');
}

/** Starts the hand-written metered proxy. */
export async function startHandWrittenGateway(options: HandWrittenGatewayOptions): Promise<BareProxy> {
  const upstream = new URL(options.upstream);
  const pool = new Pool(upstream.origin, { connections: options.connections ?? 64, pipelining: 1, keepAliveTimeout: 30_000 });
  const prices = new Map(Object.entries(options.prices));
  let balance = Number.MAX_SAFE_INTEGER;
  let head = 0;
  const answers = options.cache === true ? new Map<string, Buffer>() : undefined;

  const serve = (req: IncomingMessage, res: ServerResponse, body: Buffer): void => {
    let call: { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };
    try {
      call = JSON.parse(body.toString('utf8')) as typeof call;
    } catch {
      return refuse(res, 400);
    }
    const credits = typeof call.method === 'string' ? prices.get(call.method) : undefined;
    if (!req.url!.endsWith(`/v3/${options.key}`) || call.jsonrpc !== '2.0' || credits === undefined || !Array.isArray(call.params)) return refuse(res, 400);
    if (balance < credits) return refuse(res, 402);
    balance -= credits;
    const key = answers === undefined ? undefined : `${call.method as string}:${JSON.stringify(call.params)}`;
    const kept = key === undefined ? undefined : answers!.get(key);
    if (kept !== undefined) {
      return send(res, 200, envelope(call.id as JsonRpcId | undefined, 'result', kept));
    }
    pool.dispatch({ path: upstream.pathname, method: 'POST', headers: HEADERS, body }, new Answer((status, answer) => {
      if (call.method === 'eth_getBlockByNumber') {
        const at = answer.indexOf(NUMBER);
        if (at !== -1) head = Math.max(head, parseInt(answer.toString('latin1', at + NUMBER.length, answer.indexOf(0x22, at + NUMBER.length)), 16));
      }
      if (answer.indexOf(ERROR) !== -1) balance += credits;
      else if (key !== undefined && status === 200) {
        const member = answerMember(answer);
        // Copied: the answer's buffer may be a slice of a larger one.
        if (member?.kind === 'result') answers!.set(key, Buffer.from(member.bytes));
      }
      send(res, status, answer);
    }));
  };

  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => serve(req, res, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
  });
  return listenBeside(server, pool, 0, '127.0.0.1');
}
