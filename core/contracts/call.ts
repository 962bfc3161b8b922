// What a transport hands the pipeline for one call: the call, the client's credentials and connection.
import type { ApiKeyRecord } from './keys.js';
import type { JsonRpcId } from './json-rpc.js';
import type { UpstreamFailure } from './upstream-failure.js';
import type { CancelSignal } from './cancel-signal.js';
import type { ContextKey, ContextState } from './context-state.js';
import type { UpstreamRequest, UpstreamReply, Upstream } from './upstream.js';

/** What the client sent to authenticate: the key from the URL, and for some APIs a secret. */
export interface Credentials {
  /** The API key, as the client sent it. Never log it: log {@link ApiKeyRecord.id} instead. */
  readonly apiKey: string | undefined;
  /** The key's secret (HTTP basic password), when the interface uses one. */
  readonly secret?: string | undefined;
  /** Where the transport expects the key, for the error a call without one gets (`the URL: /v3/<API_KEY>`). */
  readonly keyHint?: string | undefined;
}

/** Facts about the client connection that stages may consult (allowlists, logs). */
export interface RequestMeta {
  /** The `Origin` header, if any. */
  readonly origin?: string | undefined;
  /** The `User-Agent` header, if any. */
  readonly userAgent?: string | undefined;
  /** The client's address. */
  readonly remoteAddress?: string | undefined;
  /** All request headers, lower-cased names. */
  readonly headers?: Readonly<Record<string, string | string[] | undefined>>;
  /**
   * State of the client's long-lived connection (a WebSocket), shared by every call made on it: the
   * transport creates one per connection, and stages keep per-connection state there under their
   * {@link ContextKey} (the subscriptions a connection holds, for instance). Absent for one-shot requests.
   */
  readonly connection?: ContextState;
  /**
   * Another way for this client's calls to reach upstreams than their own {@link Upstream.request}: a
   * transport that holds connections sets one (a pool of persistent connections to the nodes, for
   * instance), and every upstream attempt of its calls, alone or in a batch, is offered to it first (see
   * {@link UpstreamChannel}). Absent: every attempt uses the upstream's own request.
   */
  readonly channel?: UpstreamChannel;
}

/**
 * A road to upstreams that a transport offers for its calls (see {@link RequestMeta.channel}), beside
 * each upstream's own {@link Upstream.request}. Dispatch offers it every attempt under the same rules
 * as any other: the selector admits the upstream first and learns the outcome, failures fail over, a
 * call that may have been received is never resent when it is not idempotent, and cancelling the call
 * aborts `signal`.
 */
export interface UpstreamChannel {
  /**
   * Sends `request` to `upstream` and resolves with the reply as {@link Upstream.request} would give it
   * (the same status, the same ids in the body), or rejects with an `UpstreamFailure` (`connect`,
   * `reset` or `timeout`, with `maybeReceived` true once the request may have left). Returns undefined,
   * synchronously, when the channel cannot carry this request now (no connection to that upstream yet, a
   * request it does not carry): the attempt then goes by `upstream.request`, so a channel that is down
   * never fails a call by itself. When `signal` aborts, the request is dropped and the promise rejects.
   */
  request(upstream: Upstream, request: UpstreamRequest, timeoutMs: number, signal: CancelSignal): Promise<UpstreamReply> | undefined;
}

/** One call: a JSON-RPC request, or a command of another API (the file-storage API, for instance). */
export interface Call {
  /** Method or command name. */
  readonly method: string;
  /** Parameters as the client sent them. A `limits` hook may replace them (see {@link RequestContext.params}). */
  readonly params: unknown;
  /** JSON-RPC id; `undefined` for a notification, or for a call of a non-JSON-RPC API. */
  readonly id?: JsonRpcId | undefined;
  /** The client's exact bytes for this call, forwarded unchanged when nothing was rewritten. */
  readonly raw?: Uint8Array | undefined;
}
