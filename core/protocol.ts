import type { RequestContext, UpstreamReply } from './context.js';
import type { UpstreamRequest } from './upstream/upstream.js';
import type { UpstreamFailure } from './upstream/upstream-failure.js';

/**
 * How calls of a family travel to its upstreams: how a call becomes an upstream request, and which
 * replies are answers versus failures worth trying elsewhere. JSON-RPC is the default; a family with
 * another wire protocol (a file-storage API, for instance) brings its own.
 */
export interface CallProtocol {
  /** Builds the upstream request for the call. */
  encode(ctx: RequestContext): UpstreamRequest;
  /** Returns a failure when the reply is not an answer (an HTTP 5xx, a capacity error...), else undefined. */
  inspect(reply: UpstreamReply, ctx: RequestContext): UpstreamFailure | undefined;
}
