import type { Credentials, RequestMeta } from './call.js';
import type { Network, RequestContext } from './request-context.js';

/** A JSON-RPC body addressed to a network. */
export interface JsonRpcInput {
  /** Transport name. */
  readonly transport: string;
  /** The addressed network. */
  readonly network: Network;
  /** The client's credentials. */
  readonly credentials: Credentials;
  /** The body: raw bytes or text as received, or an already parsed value. */
  readonly body: Uint8Array | string | unknown;
  /** Facts about the client connection. */
  readonly meta?: RequestMeta;
  /**
   * Cancels the calls still running when it aborts; they are answered with an error and refunded. (To
   * cancel without an answer, unsubscribe.)
   */
  readonly signal?: AbortSignal;
}

/** What to answer a JSON-RPC body with. */
export interface JsonRpcOutput {
  /** HTTP status (transports without statuses may ignore it). */
  readonly status: number;
  /** Response headers (`retry-after`, the served-by header). */
  readonly headers: Record<string, string>;
  /** The response body; undefined when there is nothing to answer (only notifications). */
  readonly body: string | Buffer | undefined;
  /** The calls' contexts, in request order (for logs and metrics). */
  readonly contexts: readonly RequestContext[];
}
