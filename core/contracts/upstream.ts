// An upstream node as the core sees it: its settings, the request it is sent and the reply it gives.
import type { UpstreamFailure } from './upstream-failure.js';
import type { CancelSignal } from './cancel-signal.js';
import type { UpstreamBudget } from './upstream-budgets.js';

/** The answer an upstream gave, as bytes (for JSON-RPC: the whole response envelope). */
export interface UpstreamReply {
  /** HTTP status the upstream answered with. */
  readonly status: number;
  /** Response headers the upstream sent. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The response body; a stream for streaming APIs. */
  readonly body: Uint8Array | NodeJS.ReadableStream;
  /**
   * Trailers the upstream sent after a streamed body (a stream error reported after the status was sent, for instance), complete
   * once the body has ended; absent when the upstream client does not expose them.
   */
  readonly trailers?: Readonly<Record<string, string | string[] | undefined>>;
}

/** One request to an upstream. */
export interface UpstreamRequest {
  /** Path appended to the upstream URL's path; default: the URL's own path. */
  readonly path?: string;
  /** HTTP method; default POST. */
  readonly method?: 'POST' | 'GET';
  /** Extra headers. */
  readonly headers?: Readonly<Record<string, string>>;
  /** The body: the client's bytes when nothing was rewritten. */
  readonly body?: Uint8Array | string | NodeJS.ReadableStream;
  /** Overrides the upstream's timeout. */
  readonly timeoutMs?: number;
  /** Aborts the request. */
  readonly signal?: CancelSignal;
  /** Answer with the body as a stream rather than bytes. */
  readonly stream?: boolean;
}

/** How one upstream is reached. */
export interface UpstreamSettings {
  /** Unique name (logs, metrics, the served-by header). */
  readonly name: string;
  /** The network it serves. */
  readonly network: string;
  /** Its URL. */
  readonly url: string;
  /** Its WebSocket URL, when it has one (subscriptions need it). */
  readonly wsUrl?: string | undefined;
  /** Primary node or partner provider (failover). */
  readonly role: 'primary' | 'partner';
  /** Headers sent with every request. */
  readonly headers: Readonly<Record<string, string>>;
  /** Per-request timeout. */
  readonly timeoutMs: number;
  /** Connect timeout. */
  readonly connectTimeoutMs: number;
  /** Keep-alive connections in its pool. */
  readonly connections: number;
  /** How long an idle connection is kept. */
  readonly keepAliveTimeoutMs: number;
  /** Share of calls among equals. */
  readonly weight?: number;
  /** Its own plan, kept for the deployment (see `UpstreamBudgets`). */
  readonly budget?: UpstreamBudget | undefined;
}

/** A node endpoint the gateway forwards calls to. */
export interface Upstream {
  /** How it is reached. */
  readonly settings: UpstreamSettings;
  /** Its name. */
  readonly name: string;
  /** Primary node or partner provider. */
  readonly role: 'primary' | 'partner';
  /** Share of calls among equals. */
  readonly weight: number;
  /** Requests in flight. */
  readonly inFlight: number;
  /** Sends one request; rejects with an `UpstreamFailure` when the node cannot be reached or times out. */
  request(request: UpstreamRequest, timeoutMs?: number, signal?: CancelSignal): Promise<UpstreamReply>;
  /** Closes its connections. */
  close(): Promise<void>;
}
