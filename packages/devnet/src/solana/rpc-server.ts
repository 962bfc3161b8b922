/**
 * A `node:http` JSON-RPC server in front of a {@link LiteSvmNode}, answering as agave's RPC service
 * does: POST with a JSON body (one call or a batch), `GET /health`, envelopes written
 * `{"jsonrpc","result"|"error","id"}`. Its WebSocket (pubsub) service answers upgrades on the same
 * port and, as agave serves pubsub, on the port after it (what web3.js's `Connection` derives when
 * given no `wsEndpoint`).
 *
 * @module
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { LiteSvmNode } from './litesvm-node.js';
import { jsonText } from './json-text.js';
import { RpcError } from './rpc-error.js';
import { SOLANA_NODE_METHODS, type MethodContext } from './rpc-methods.js';
import { startPubsub, type PubsubService } from './pubsub/pubsub-server.js';

/** How to start a {@link LiteSvmServer}. */
export interface LiteSvmServerOptions {
  /** The node to serve. */
  readonly node: LiteSvmNode;
  /** Interface to listen on (default `127.0.0.1`). */
  readonly host?: string;
  /** Port (default 0: a free one). */
  readonly port?: number;
  /** Largest request body, in bytes (default 16 MiB); larger ones get HTTP 413. */
  readonly maxBodyBytes?: number;
  /**
   * Whether to also serve the WebSocket on `port + 1`, agave's pubsub port (default true). With
   * `port: 0` the server looks for a free pair of ports; with a fixed port, `port + 1` is used when free.
   */
  readonly pubsubNextPort?: boolean;
}

/** A running embedded Solana RPC server. */
export interface LiteSvmServer {
  /** Its HTTP JSON-RPC URL. */
  readonly url: string;
  /** Its WebSocket URL (the same port as {@link url}). */
  readonly wsUrl: string;
  /** The WebSocket URL on `port + 1`, as agave serves pubsub, when that port could be had. */
  readonly pubsubUrl: string | undefined;
  /** The port it listens on. */
  readonly port: number;
  /** The WebSocket service (its live subscriptions). */
  readonly pubsub: PubsubService;
  /** The Node HTTP server. */
  readonly server: Server;
  /** Answers one parsed request (a call or a batch) as the server would; `undefined` when nothing is answered (notifications). */
  answer(request: unknown): Promise<string | undefined>;
  /** Closes the server. Idempotent. */
  stop(): Promise<void>;
}

type Id = string | number | null;

function envelope(id: Id, outcome: { result: unknown } | { error: RpcError }): string {
  if ('result' in outcome) return `{"jsonrpc":"2.0","result":${jsonText(outcome.result)},"id":${jsonText(id)}}`;
  const { code, message, data } = outcome.error;
  return `{"jsonrpc":"2.0","error":${jsonText({ code, message, data })},"id":${jsonText(id)}}`;
}

const INVALID_REQUEST = envelope(null, { error: RpcError.invalidRequest() });

async function answerCall(call: unknown, ctx: MethodContext): Promise<string | undefined> {
  if (typeof call !== 'object' || call === null || Array.isArray(call)) return INVALID_REQUEST;
  const { jsonrpc, method, params, id } = call as Record<string, unknown>;
  const validId = id === undefined || id === null || typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
  if (jsonrpc !== '2.0' || typeof method !== 'string' || !validId) return INVALID_REQUEST;
  if (params !== undefined && (typeof params !== 'object' || params === null)) return INVALID_REQUEST;
  const notification = !('id' in (call as object));
  const handler = Object.hasOwn(SOLANA_NODE_METHODS, method) ? SOLANA_NODE_METHODS[method] : undefined;
  let reply: string;
  if (handler === undefined) {
    reply = envelope((id ?? null) as Id, { error: new RpcError(-32601, 'Method not found') });
  } else {
    try {
      reply = envelope((id ?? null) as Id, { result: await handler(params, ctx) });
    } catch (error) {
      const rpcError = error instanceof RpcError ? error : new RpcError(-32603, 'Internal error');
      reply = envelope((id ?? null) as Id, { error: rpcError });
    }
  }
  return notification ? undefined : reply;
}

async function answerRequest(request: unknown, ctx: MethodContext): Promise<string | undefined> {
  if (!Array.isArray(request)) return answerCall(request, ctx);
  if (request.length === 0) return INVALID_REQUEST;
  const replies = (await Promise.all(request.map((call) => answerCall(call, ctx)))).filter((r): r is string => r !== undefined);
  return replies.length === 0 ? undefined : `[${replies.join(',')}]`;
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) { resolve(undefined); req.resume(); return; }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(size > limit ? undefined : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: string, type = 'application/json; charset=utf-8'): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * Starts the server on a free 127.0.0.1 port (or `options.port`).
 *
 * @example
 * ```ts
 * const node = new LiteSvmNode();
 * const server = await startLiteSvmServer({ node });
 * // POST {"jsonrpc":"2.0","id":1,"method":"getSlot"} to server.url
 * await server.stop(); node.stop();
 * ```
 */
export async function startLiteSvmServer(options: LiteSvmServerOptions): Promise<LiteSvmServer> {
  const host = options.host ?? '127.0.0.1';
  const maxBodyBytes = options.maxBodyBytes ?? 16 * 1024 * 1024;
  let ctx: MethodContext = { node: options.node, rpcAddress: '' };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method === 'GET' && req.url === '/health') { send(res, 200, 'ok', 'text/plain; charset=utf-8'); return; }
    if (req.method !== 'POST') { send(res, 405, 'Used HTTP Method is not allowed. POST or OPTIONS is required', 'text/plain; charset=utf-8'); return; }
    if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) {
      send(res, 415, 'Supplied content type is not allowed. Content-Type: application/json is required', 'text/plain; charset=utf-8');
      return;
    }
    const body = await readBody(req, maxBodyBytes);
    if (body === undefined) { send(res, 413, 'Payload Too Large', 'text/plain; charset=utf-8'); return; }
    let request: unknown;
    try {
      request = JSON.parse(body.toString('utf8'));
    } catch {
      send(res, 200, envelope(null, { error: new RpcError(-32700, 'Parse error') }));
      return;
    }
    const reply = await answerRequest(request, ctx);
    if (reply === undefined) { res.writeHead(200, { 'content-length': 0 }).end(); return; }
    send(res, 200, reply);
  };

  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    handle(req, res).catch(() => {
      if (res.headersSent) res.destroy();
      else send(res, 500, envelope(null, { error: new RpcError(-32603, 'Internal error') }));
    });
  });
  const pubsub = startPubsub(options.node);
  pubsub.attach(server);
  // The pubsub port serves WebSocket upgrades only, as agave's: plain HTTP there is refused.
  const nextServer = createServer((_req, res) => send(res, 405, 'WebSocket only', 'text/plain; charset=utf-8'));
  pubsub.attach(nextServer);
  let port: number;
  let nextPort: number | undefined;
  try {
    ({ port, nextPort } = await listenPair(server, nextServer, options.port ?? 0, host, options.pubsubNextPort ?? true));
  } catch (error) {
    pubsub.close();
    throw error;
  }
  const shownHost = host.includes(':') ? `[${host}]` : host;
  ctx = { node: options.node, rpcAddress: `${shownHost}:${port}`, pubsubAddress: `${shownHost}:${nextPort ?? port}` };
  let stopping: Promise<void> | undefined;
  const closeServer = (s: Server): Promise<void> => new Promise<void>((resolve) => { s.close(() => resolve()); s.closeAllConnections(); });
  return {
    url: `http://${shownHost}:${port}`,
    wsUrl: `ws://${shownHost}:${port}`,
    pubsubUrl: nextPort === undefined ? undefined : `ws://${shownHost}:${nextPort}`,
    port,
    pubsub,
    server,
    answer: (request) => answerRequest(request, ctx),
    stop() {
      stopping ??= (async () => {
        pubsub.close();
        await Promise.all([closeServer(server), nextPort === undefined ? undefined : closeServer(nextServer)]);
      })();
      return stopping;
    },
  };
}

function listen(server: Server, port: number, host: string): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException): void => {
      if (error.code === 'EADDRINUSE' || error.code === 'EACCES') resolve(undefined);
      else reject(error);
    };
    server.once('error', failed);
    server.listen(port, host, () => { server.off('error', failed); resolve((server.address() as { port: number }).port); });
  });
}

/** Listens on `port` (0: any) and, when wanted, on the port after it; with port 0, tries a few pairs. */
async function listenPair(server: Server, next: Server, port: number, host: string, wantNext: boolean): Promise<{ port: number; nextPort: number | undefined }> {
  for (let attempt = 0; ; attempt++) {
    const bound = await listen(server, port, host);
    if (bound === undefined) throw Object.assign(new Error(`listen EADDRINUSE: ${host}:${port}`), { code: 'EADDRINUSE' });
    if (!wantNext || bound === 65535) return { port: bound, nextPort: undefined };
    const nextPort = await listen(next, bound + 1, host);
    if (nextPort !== undefined || port !== 0 || attempt === 9) return { port: bound, nextPort };
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
