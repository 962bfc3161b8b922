import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { Pool, type Dispatcher } from 'undici';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { answerBorCall, isBorCall } from './bor-answer.js';
import { borValidators, type BorSignerInput, type BorValidator } from './bor-validators.js';
import { JsonRpcClient } from './json-rpc-client.js';

/** How to start a {@link BorServer}. */
export interface BorServerOptions {
  /** HTTP URL of the node every other request is forwarded to (an Anvil). */
  readonly upstream: string;
  /** WebSocket URL of the same node: when given, the shim takes WebSocket connections too, relayed to it. */
  readonly wsUpstream?: string;
  /** The validators' signers (default: the upstream's `eth_accounts`). */
  readonly signers?: readonly BorSignerInput[];
  /** Interface to listen on (default `127.0.0.1`). */
  readonly host?: string;
  /** Port to listen on (default 0: a free one). */
  readonly port?: number;
  /** Keep-alive connections to the upstream (default 16). */
  readonly connections?: number;
  /** Largest accepted request body, in bytes (default 16 MiB); larger ones get 413. */
  readonly maxBodyBytes?: number;
}

/** A running bor shim. */
export interface BorServer {
  /** Its HTTP JSON-RPC URL. */
  readonly url: string;
  /** Its WebSocket URL, when it was given a `wsUpstream`. */
  readonly wsUrl: string | undefined;
  /** The port it listens on. */
  readonly port: number;
  /** What `bor_getCurrentValidators` answers. */
  readonly validators: readonly BorValidator[];
  /** The Node HTTP server. */
  readonly server: Server;
  /** Closes the server and the upstream pool. Idempotent. */
  stop(): Promise<void>;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-connection', 'host', 'content-length', 'expect']);

function forwardableHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name)) continue;
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

class BodyTooLarge extends Error {}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) { reject(new BodyTooLarge()); req.resume(); return; }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * Starts a small JSON-RPC server in front of a node for Polygon-like devnets: it answers
 * `bor_getCurrentValidators` from the configured signers and forwards every other request to the
 * upstream byte for byte (method, path, headers, body; the answer comes back as the upstream sent it).
 * In a batch, the `bor_getCurrentValidators` items are answered here, the rest forwarded as one batch,
 * and the answers merged back in request order. With a `wsUpstream`, WebSocket connections get the same:
 * each has its own connection to the node's WebSocket, every message but a `bor_getCurrentValidators`
 * call (or a batch holding one, answered as over HTTP) relayed as is, and every message of the node
 * (answers, subscription events) relayed back. Without one, WebSocket upgrades are refused.
 *
 * @example
 * ```ts
 * const anvil = await startAnvil({ chainId: 137 });
 * const bor = await startBorServer({ upstream: anvil.url });
 * // POST {"jsonrpc":"2.0","id":1,"method":"bor_getCurrentValidators","params":[]} to bor.url
 * ```
 */
export async function startBorServer(options: BorServerOptions): Promise<BorServer> {
  const upstream = new URL(options.upstream);
  let signers = options.signers;
  if (signers === undefined) {
    const client = new JsonRpcClient(options.upstream);
    try { signers = await client.call<string[]>('eth_accounts'); } finally { await client.close(); }
  }
  const validators = borValidators(signers);
  const pool = new Pool(upstream.origin, { connections: options.connections ?? 16, keepAliveTimeout: 30_000 });
  const basePath = upstream.pathname === '/' ? '' : upstream.pathname.replace(/\/$/, '');
  const maxBodyBytes = options.maxBodyBytes ?? 16 * 1024 * 1024;

  const forward = (req: Pick<IncomingMessage, 'method' | 'url' | 'headers'>, body: Buffer): Promise<Dispatcher.ResponseData> => {
    const method = (req.method ?? 'POST') as Dispatcher.HttpMethod;
    return pool.request({
      method,
      path: `${basePath}${req.url ?? '/'}`,
      headers: forwardableHeaders(req.headers),
      body: method === 'GET' || method === 'HEAD' ? null : body,
    });
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    let body: Buffer;
    try {
      body = await readBody(req, maxBodyBytes);
    } catch (error) {
      if (error instanceof BodyTooLarge) sendJson(res, 413, { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'request body too large' } });
      else res.destroy();
      return;
    }
    let parsed: unknown;
    try { parsed = req.method === 'POST' ? JSON.parse(body.toString('utf8')) : undefined; } catch { parsed = undefined; }

    if (isBorCall(parsed)) {
      const answer = answerBorCall(parsed, validators);
      if (answer === undefined) { res.writeHead(200).end(); return; }
      sendJson(res, 200, answer);
      return;
    }
    if (Array.isArray(parsed) && parsed.some(isBorCall)) {
      await answerMixedBatch(parsed, req, res);
      return;
    }
    const reply = await forward(req, body);
    res.writeHead(reply.statusCode, replyHeaders(reply.headers));
    await pipeline(reply.body, res);
  };

  const answerMixedBatch = async (batch: unknown[], req: Pick<IncomingMessage, 'method' | 'url' | 'headers'>, res: ServerResponse): Promise<void> => {
    const answer = await mixedBatchAnswer(batch, req);
    if (answer.text === undefined) res.writeHead(200).end();
    else if (answer.headers !== undefined) res.writeHead(answer.status, answer.headers).end(answer.text);
    else res.writeHead(answer.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer.text) }).end(answer.text);
  };

  /** A batch holding `bor_getCurrentValidators` calls: those answered here, the rest by the node, merged in request order. */
  const mixedBatchAnswer = async (batch: unknown[], req: Pick<IncomingMessage, 'method' | 'url' | 'headers'>): Promise<{ status: number; text: string | undefined; headers?: Record<string, string | string[]> }> => {
    const rest = batch.filter((item) => !isBorCall(item));
    const local = (item: unknown): Record<string, unknown> | undefined => (isBorCall(item) ? answerBorCall(item, validators) : undefined);
    if (rest.length === 0) {
      const answers = batch.map(local).filter((a) => a !== undefined);
      return { status: 200, text: answers.length === 0 ? undefined : JSON.stringify(answers) };
    }
    const reply = await forward(req, Buffer.from(JSON.stringify(rest)));
    const text = await reply.body.text();
    let forwarded: unknown;
    try { forwarded = JSON.parse(text); } catch { forwarded = undefined; }
    if (!Array.isArray(forwarded)) {
      // Not a batch answer (an error for the whole request): pass it on as the upstream sent it.
      return { status: reply.statusCode, text, headers: replyHeaders(reply.headers) };
    }
    let merged: unknown[];
    if (forwarded.length === rest.length) {
      let next = 0;
      merged = batch.map((item) => (isBorCall(item) ? local(item) : forwarded[next++])).filter((a) => a !== undefined);
    } else {
      merged = [...forwarded, ...batch.map(local).filter((a) => a !== undefined)];
    }
    return { status: reply.statusCode, text: JSON.stringify(merged) };
  };

  /** One client WebSocket: its own connection to the node's, every message relayed but those the shim answers. */
  const relaySocket = (client: WebSocket, nodeUrl: string): void => {
    const node = new WebSocket(nodeUrl, { perMessageDeflate: false });
    const early: RawData[] = [];
    const answer = (text: string | undefined): void => { if (text !== undefined && client.readyState === WebSocket.OPEN) client.send(text); };
    client.on('message', (data, isBinary) => {
      let parsed: unknown;
      try { parsed = isBinary ? undefined : JSON.parse(String(data)); } catch { parsed = undefined; }
      if (isBorCall(parsed)) {
        const local = answerBorCall(parsed, validators);
        answer(local === undefined ? undefined : JSON.stringify(local));
      } else if (Array.isArray(parsed) && parsed.some(isBorCall)) {
        mixedBatchAnswer(parsed, { method: 'POST', url: '/', headers: { 'content-type': 'application/json' } }).then(
          (reply) => answer(reply.text),
          () => client.terminate(),
        );
      } else if (node.readyState === WebSocket.OPEN) node.send(data, { binary: isBinary });
      else early.push(data);
    });
    node.on('open', () => { for (const data of early.splice(0)) node.send(data, { binary: false }); });
    node.on('message', (data, isBinary) => { if (client.readyState === WebSocket.OPEN) client.send(data, { binary: isBinary }); });
    node.on('error', () => node.terminate());
    client.on('error', () => client.terminate());
    // Either side going away ends the other: a client sees its node's restart as a closed connection.
    node.on('close', () => client.terminate());
    client.on('close', () => node.terminate());
  };

  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent) { res.destroy(); return; }
      sendJson(res, 502, { jsonrpc: '2.0', id: null, error: { code: -32603, message: `bor shim: upstream failed: ${(error as Error).message}` } });
    });
  });
  const wsServer = options.wsUpstream === undefined ? undefined : new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: maxBodyBytes });
  server.on('upgrade', (req, socket, head) => {
    if (wsServer === undefined || options.wsUpstream === undefined) {
      socket.end('HTTP/1.1 501 Not Implemented\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const nodeUrl = options.wsUpstream;
    wsServer.handleUpgrade(req, socket, head, (client) => relaySocket(client, nodeUrl));
  });

  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => { server.off('error', reject); resolve(); });
    });
  } catch (error) {
    await pool.close();
    throw error;
  }
  const { port } = server.address() as { port: number };
  const host = options.host ?? '127.0.0.1';
  let stopping: Promise<void> | undefined;
  const authority = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  return {
    url: `http://${authority}`,
    wsUrl: wsServer === undefined ? undefined : `ws://${authority}`,
    port,
    validators,
    server,
    stop() {
      stopping ??= (async () => {
        for (const client of wsServer?.clients ?? []) client.terminate();
        await new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); });
        await pool.close();
      })();
      return stopping;
    },
  };
}

function replyHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  }
  if (headers['content-length'] !== undefined) out['content-length'] = headers['content-length'];
  return out;
}
