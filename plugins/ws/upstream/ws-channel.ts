import type { CancelSignal } from '../../../core/transport-api.js';
import type { Upstream, UpstreamChannel, UpstreamRequest } from '../../../core/upstream-api.js';
import type { UpstreamReply } from '../../../core/plugin-api.js';
import type { UpstreamSocketPool } from './socket-pool.js';

/**
 * The road the WebSocket transport offers its clients' calls (core's `UpstreamChannel`): a JSON-RPC call
 * or batch bound for an upstream with a `wsUrl` travels over one of the pool's open sockets to it, with
 * the dispatch's failover, breaker and no-resend rules. Anything else (no `wsUrl`, no socket open yet,
 * a streamed, non-POST or header-carrying request) is left to the upstream's HTTP request.
 */
export class WsUpstreamChannel implements UpstreamChannel {
  readonly #pool: UpstreamSocketPool;
  /** Calls (a batch request counts once) sent over an upstream WebSocket. */
  sent = 0;

  constructor(pool: UpstreamSocketPool) {
    this.#pool = pool;
  }

  request(upstream: Upstream, request: UpstreamRequest, timeoutMs: number, signal: CancelSignal): Promise<UpstreamReply> | undefined {
    const body = request.body;
    if (body === undefined || request.stream === true || request.headers !== undefined || request.path !== undefined || request.method === 'GET') return undefined;
    const socket = this.#pool.forCall(upstream);
    if (socket === undefined) return undefined;
    const bytes = Buffer.isBuffer(body) ? body : typeof body === 'string' ? Buffer.from(body) : body instanceof Uint8Array ? Buffer.from(body.buffer, body.byteOffset, body.byteLength) : undefined;
    if (bytes === undefined) return undefined;
    const sent = socket.request(bytes, timeoutMs, signal);
    if (sent !== undefined) this.sent++;
    return sent;
  }
}
