import type { StreamAsk } from '../../../core/family-api.js';
import { type Upstream } from '../../../core/upstream-api.js';
import { UpstreamCallError } from '../upstream/upstream-socket.js';

/**
 * A stream's history reads sent to one upstream over HTTP (a JSON-RPC POST to its `url`), for nodes whose
 * WebSocket serves subscriptions only: the node asked is the one serving the stream, so the answers
 * describe the chain as its events do. Rejects with the node's error as an {@link UpstreamCallError}.
 */
export function httpAsk(upstream: Upstream, timeoutMs: number): StreamAsk {
  let id = 0;
  return async (method, params) => {
    const reply = await upstream.request({ body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }), headers: { 'content-type': 'application/json' } }, timeoutMs);
    const body = reply.body as Uint8Array;
    const message = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8')) as { result?: unknown; error?: { code?: number; message?: string } };
    if (message.error !== undefined) throw new UpstreamCallError(message.error.code ?? -32603, message.error.message ?? 'upstream error');
    return message.result;
  };
}
