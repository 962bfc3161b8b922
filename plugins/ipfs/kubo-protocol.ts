import { UpstreamFailure, type UpstreamRequest } from '../../core/upstream-api.js';
import type { UpstreamReply } from '../../core/plugin-api.js';
import type { CallProtocol } from '../../core/family-api.js';
import { ipfsCommand } from './commands.js';
import { parseContentPath } from './content-path.js';
import { IPFS_REQUEST, OBJECT_FROM_BLOCK } from './context-keys.js';

function discard(reply: UpstreamReply): void {
  const body = reply.body as { destroy?: () => void };
  if (typeof body.destroy === 'function') body.destroy();
}

function headerOf(reply: UpstreamReply, name: string): string {
  const value = reply.headers[name];
  return (Array.isArray(value) ? value[0] : value) ?? '';
}

/** Whether an upstream reply is kubo's own error answer (`{"Message","Code","Type"}` as JSON with HTTP 500), which is relayed, not retried. */
export function isKuboError(reply: UpstreamReply): boolean {
  return reply.status === 500 && headerOf(reply, 'content-type').startsWith('application/json');
}

/**
 * kubo's HTTP RPC: `POST /api/v0/<command>?<query>` on the upstream (its URL's path, if any, in front),
 * and, for an upload (`add`, `block/put`, `dag/put`, `dag/import`), the client's multipart body streamed through. The query is rebuilt from the call's
 * validated params (each `arg`, then each option once, with the value that was checked), never copied
 * from the client's: a repeated option or an odd encoding cannot reach the node unchecked.
 * Streaming commands (`cat`, `add`) get their answer as a stream; `object/get` and `version` whole.
 *
 * Failures worth another upstream: HTTP 429 and any 5xx that is not kubo's own JSON error (a proxy's
 * 502, for instance). kubo's error answers, and its 4xx, are the node's answer and reach the client.
 */
export const kuboProtocol: CallProtocol = {
  encode(ctx): UpstreamRequest {
    const request = ctx.state.get(IPFS_REQUEST);
    const query = queryOf(ctx.params);
    const command = ipfsCommand(ctx.call.method);
    if (ctx.state.get(OBJECT_FROM_BLOCK) === true) {
      // The root's raw block; the fallback stage follows any path below it.
      const [args] = ctx.params as [string[]];
      return { path: `/api/v0/block/get?arg=${parseContentPath(args[0] ?? '').cid.toString()}`, stream: false };
    }
    const path = `/api/v0/${ctx.call.method}${query === '' ? '' : `?${query}`}`;
    if (request?.body !== undefined) {
      return { path, body: request.body, headers: { 'content-type': request.contentType ?? 'application/octet-stream' }, stream: command?.stream ?? true };
    }
    return { path, stream: command?.stream ?? true };
  },
  inspect(reply) {
    if (reply.status === 429) {
      discard(reply);
      return new UpstreamFailure('overloaded', 'upstream answered HTTP 429', { maybeReceived: false, status: 429 });
    }
    if (reply.status >= 500 && !isKuboError(reply)) {
      discard(reply);
      return new UpstreamFailure('status', `upstream answered HTTP ${reply.status}`, { maybeReceived: true, status: reply.status });
    }
    return undefined;
  },
};

/** The query string of validated params `[args, options]`: `arg=` per argument, then each option. */
function queryOf(params: unknown): string {
  const [args, options] = params as [readonly string[], Readonly<Record<string, string>>];
  const query = new URLSearchParams();
  for (const arg of args) query.append('arg', arg);
  for (const [name, value] of Object.entries(options)) query.append(name, value);
  return query.toString();
}
