import type { DebitReceipt } from './metering/credit-ledger.js';
import type { ApiKeyRecord, Plan } from './metering/keys.js';
import type { MethodDefinition } from './family.js';
import type { Network } from './network.js';
import type { Upstream } from './upstream/upstream.js';
import type { GatewayError } from './errors/gateway-error.js';
import type { JsonRpcId } from './jsonrpc/types.js';

/** What the client sent to authenticate: the key from the URL, and for some APIs a secret. */
export interface Credentials {
  /** The API key, as the client sent it. Never log it: log {@link ApiKeyRecord.id} instead. */
  readonly apiKey: string | undefined;
  /** The key's secret (HTTP basic password), when the interface uses one. */
  readonly secret?: string | undefined;
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

/** Undoes an effect of an earlier stage (a debit) when the call ends in a gateway error. */
export type Compensation = () => void | Promise<void>;

/**
 * Everything the pipeline knows about one call. Transports create it; each stage reads what earlier
 * stages wrote and adds its own part. Plugins add typed entries through {@link RequestContext.state}
 * (see {@link ContextKey}) rather than new properties, so keys cannot collide.
 */
export interface RequestContext {
  /** Gateway-assigned id of this call, for logs and tracing. */
  readonly id: string;
  /** Name of the transport that received the call (`http`, `ws`, ...). */
  readonly transport: string;
  /** The network the call was addressed to. */
  readonly network: Network;
  /** The client's credentials. */
  readonly credentials: Credentials;
  /** Facts about the client connection. */
  readonly meta: RequestMeta;
  /** The call itself. */
  readonly call: Call;
  /** Aborted when the client goes away or the gateway shuts down. */
  readonly signal: AbortSignal;
  /** Set by `authenticate`: the key's record. */
  key?: ApiKeyRecord;
  /** Set by `authenticate`: the key's plan. */
  plan?: Plan;
  /** Set by `validate`: the method's definition. */
  method?: MethodDefinition;
  /** Parameters to send upstream: the client's, unless a `limits` hook rewrote them. */
  params: unknown;
  /** True when `params` differs from the client's, so the client's bytes cannot be forwarded. */
  rewritten: boolean;
  /** Set by `meter`: the debit to refund if the call fails. */
  debit?: DebitReceipt;
  /** Set by `route`: the upstreams to try, in order. */
  candidates?: readonly Upstream[];
  /** Set by `dispatch`: the upstream that answered. */
  servedBy?: Upstream;
  /** Set by `dispatch`: the upstream's answer. */
  reply?: UpstreamReply;
  /** Set on failure: the error the client gets. */
  error?: GatewayError;
  /** Number of upstream attempts made. */
  attempts: number;
  /** Time the call entered the pipeline (ms since epoch, from the gateway clock). */
  readonly startedAt: number;
  /** Undo actions, run in reverse order if the call ends in a gateway error. */
  readonly compensations: Compensation[];
  /** Typed, collision-free storage for plugins. */
  readonly state: ContextState;
}

/**
 * A typed key into {@link RequestContext.state}. Create one per piece of plugin state.
 *
 * @example
 * ```ts
 * const ALLOWED = new ContextKey<boolean>('allowlist.allowed');
 * ctx.state.set(ALLOWED, true);
 * const allowed: boolean | undefined = ctx.state.get(ALLOWED);
 * ```
 */
export class ContextKey<T> {
  /** Description, for debugging. */
  readonly description: string;
  declare private readonly phantom: T;
  constructor(description: string) {
    this.description = description;
  }
}

/** Per-call storage keyed by {@link ContextKey}; a key cannot be silently overwritten by another plugin. */
export class ContextState {
  readonly #values = new Map<ContextKey<unknown>, unknown>();

  /** The value stored under `key`, if any. */
  get<T>(key: ContextKey<T>): T | undefined {
    return this.#values.get(key) as T | undefined;
  }

  /** Stores `value` under `key`. */
  set<T>(key: ContextKey<T>, value: T): void {
    this.#values.set(key, value);
  }

  /** Whether `key` holds a value. */
  has(key: ContextKey<unknown>): boolean {
    return this.#values.has(key);
  }
}
