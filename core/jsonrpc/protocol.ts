import type { CallProtocol } from '../protocol.js';
import { UpstreamFailure } from '../upstream/upstream-failure.js';
import { encodeRequest } from './encode.js';

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;

function firstByte(body: Uint8Array): number | undefined {
  for (const byte of body) if (byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09) return byte;
  return undefined;
}

/**
 * JSON-RPC over HTTP POST. The client's own bytes are forwarded when no stage rewrote the call;
 * notifications are sent with the gateway's call id so the gateway learns whether a node served them.
 */
export const jsonRpcProtocol: CallProtocol = {
  encode(ctx) {
    const { call } = ctx;
    if (!ctx.rewritten && call.raw !== undefined && call.id !== undefined) return { body: call.raw };
    return { body: encodeRequest(call.id === undefined ? ctx.id : call.id, call.method, ctx.params) };
  },
  inspect(reply) {
    if (reply.status === 429) {
      return new UpstreamFailure('overloaded', 'upstream answered HTTP 429', { maybeReceived: false, status: 429 });
    }
    if (reply.status >= 500) {
      return new UpstreamFailure('status', `upstream answered HTTP ${reply.status}`, { maybeReceived: true, status: reply.status });
    }
    const first = firstByte(reply.body as Uint8Array);
    if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
      return new UpstreamFailure('bad-response', `upstream answered HTTP ${reply.status} without a JSON-RPC body`, { maybeReceived: true, status: reply.status });
    }
    return undefined;
  },
};
