// The request context and the contracts that refer back to it: methods and families, networks and the
// call protocol. They refer to one another, so they live in one file and no import cycle forms; what they
// refer to without being referred back (the call, upstreams, context state) has a file of its own.
import type { DebitReceipt } from './credit-ledger.js';
import type { ApiKeyRecord, Plan } from './keys.js';
import type { JsonRpcErrorObject } from '../errors/json-rpc-error.js';
import type { AnswerView } from './answer-view.js';
import type { UpstreamFailure } from './upstream-failure.js';
import type { MaybePromise, JsonSchema } from '../util/maybe-promise.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { CancelSignal } from './cancel-signal.js';
import type { GatewayConfig, NetworkConfig } from '../config/types.js';
import type { SubscriptionSupport } from './subscription.js';
import type { AnswerHead } from './shared-heads.js';
import type { ContextKey, ContextState } from './context-state.js';
import type { UpstreamRequest, UpstreamReply, Upstream } from './upstream.js';
import type { Credentials, RequestMeta, Call } from './call.js';

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
  /**
   * Aborted when the call is cancelled, the one cancellation of a call: its subscriber unsubscribed before
   * the answer (a client that went away, a closed connection, a caller's own timeout) or the signal given
   * at creation aborted. The pipeline stops at the next stage boundary and dispatch passes it to the
   * upstream request, so cancelling aborts the request in flight. It is the same cancellation as
   * {@link RequestContext.signal} without an `AbortController` per call: use it where a
   * {@link CancelSignal} is taken ({@link Upstream.request}), and `signal` where an API wants an `AbortSignal`.
   */
  readonly cancelSignal: CancelSignal;
  /**
   * The call's cancellation as a standard `AbortSignal` (made on first read): aborted with
   * {@link RequestContext.cancelSignal}.
   */
  readonly signal: AbortSignal;
  /**
   * Cancels the call: aborts {@link RequestContext.cancelSignal} and {@link RequestContext.signal}. The pipeline calls it when the call's
   * subscription ends before its answer; the call then fails and its compensations (the refund) run.
   */
  cancel(reason?: unknown): void;
  /** The client batch the call came in, when it came in one (see {@link CallBatch}). */
  readonly batch?: CallBatch | undefined;
  /**
   * Set by `authenticate`: the key's record. A stage before it that looked the key up itself may set it
   * first; `authenticate` then admits that record (live, on a served plan) instead of a second lookup.
   */
  key?: ApiKeyRecord | undefined;
  /** Set by `authenticate`: the key's plan. */
  plan?: Plan | undefined;
  /** Set by `validate`: the method's definition. */
  method?: MethodDefinition | undefined;
  /** Parameters to send upstream: the client's, unless a `limits` hook rewrote them. */
  params: unknown;
  /** True when `params` differs from the client's, so the client's bytes cannot be forwarded. */
  rewritten: boolean;
  /**
   * Credits the call costs, when a stage before `meter` priced it differently from its method (a
   * response cache pricing a hit per plan, for instance); `meter` charges the method's credits when unset.
   */
  credits?: number | undefined;
  /** Set by `meter`: the debit to refund if the call fails. */
  debit?: DebitReceipt | undefined;
  /** Set by `route`: the upstreams to try, in order. */
  candidates?: readonly Upstream[] | undefined;
  /** Set by `dispatch`: the upstream that answered. */
  servedBy?: Upstream | undefined;
  /**
   * Set by `dispatch`: the upstream's answer. A stage that sets it before `route` answers the call
   * itself (from a response cache, for instance): `route`, `dispatch` and `checkResult` then leave the
   * call alone, and {@link RequestContext.servedBy} stays unset.
   */
  reply?: UpstreamReply | undefined;
  /**
   * Set by a response-cache stage: `hit` when the answer came from its cache, `miss` when the call was
   * cacheable but went upstream; unset for calls no cache considered. Usage and metrics count it.
   */
  cache?: 'hit' | 'miss' | undefined;
  /**
   * Headers a stage adds to the answer, lower-cased names (transports with headers send them; in a
   * batch, the distinct values of each header are joined with `, ` in request order).
   */
  replyHeaders?: Record<string, string> | undefined;
  /** Set on failure: the error the client gets. */
  error?: GatewayError | undefined;
  /** Number of upstream attempts made. */
  attempts: number;
  /** Time the call entered the pipeline (ms since epoch, from the gateway clock). */
  readonly startedAt: number;
  /** Undo actions, run in reverse order if the call ends in a gateway error. */
  readonly compensations: Compensation[];
  /** Typed, collision-free storage for plugins. */
  readonly state: ContextState;
}

/** What a method's {@link MethodDefinition.limits} hook receives. */
export interface LimitsInput {
  /** The validated parameters (an array for positional methods). */
  readonly params: unknown;
  /** The call's context. */
  readonly ctx: RequestContext;
  /** The network: its per-network state and an uncharged way to ask its upstreams. */
  readonly network: NetworkRuntime;
}

/** A node error read as success by {@link MethodDefinition.onNodeError}. */
export interface NodeErrorSettlement {
  /** The result the client gets instead of the node's error. */
  readonly result: unknown;
}

/** What a method's {@link MethodDefinition.onNodeError} hook receives. */
export interface NodeErrorInput {
  /** The parameters the call was sent with. */
  readonly params: unknown;
  /** The call's context. */
  readonly ctx: RequestContext;
  /** The node that gave the error. */
  readonly upstream: Upstream;
  /** Calls `method` on that node (uncharged, with its timeout): resolves with its result, rejects with its error. */
  ask(method: string, params: readonly unknown[]): Promise<unknown>;
}

/**
 * One method of a network family: its parameter schema, its credit cost and its policies. Method tables
 * are data; adding a method is adding an entry.
 *
 * @example
 * ```ts
 * const getBalance: MethodDefinition = {
 *   name: 'eth_getBalance',
 *   credits: 80,
 *   params: { type: 'array', prefixItems: [address, blockTag], minItems: 2, items: false },
 *   paramNames: ['address', 'block'],
 * };
 * ```
 */
export interface MethodDefinition {
  /** The method's name as clients call it. */
  readonly name: string;
  /** JSON Schema of the `params` value (missing params are validated as `[]`). */
  readonly params: JsonSchema;
  /**
   * A check the schema cannot express (a checksum, a decoded length), run by `validate` right after the
   * schema, before anything is charged: return a message naming the parameter to refuse with `-32602`.
   */
  readonly checkParams?: (params: unknown) => string | undefined;
  /** Names of the positional parameters, used in error messages. */
  readonly paramNames?: readonly string[];
  /** Credits charged per call. */
  readonly credits: number;
  /** Whether the call may go to a partner provider when no primary can serve (plans permitting). */
  readonly failover?: boolean;
  /** False for calls that must never be sent twice (`eth_sendRawTransaction`). Default true. */
  readonly idempotent?: boolean;
  /** Upstream timeout for this method, overriding the upstream's own. */
  readonly timeoutMs?: number;
  /** The error a client gets when {@link timeoutMs} runs out (default: the catalog's upstream timeout). */
  readonly onTimeout?: () => GatewayError;
  /** Transports that offer the method; all when absent. */
  readonly transports?: readonly string[];
  /**
   * Enforces limits before dispatch: throw a {@link GatewayError} to refuse, return new params to rewrite
   * the call (a capped value), or return nothing to send it unchanged.
   */
  readonly limits?: (input: LimitsInput) => MaybePromise<unknown>;
  /**
   * The chain head an answer shows the client, when it shows one (a "current height" method, the block
   * a `latest` tag resolved to): the gateway never lets a client see a head below one any upstream of
   * the deployment has already shown in the same scope. An answer below it is not passed on: the call
   * moves to another node, or ends with `UPSTREAM_BEHIND` (see {@link AnswerHead}). It is asked only
   * for an answer with a result (`answer.kind === 'result'`), and reads what it needs by scanning
   * (`answer.member('result', 'number')`): the answer is not parsed on this path, and is read only up to
   * the member asked for (see `AnswerViewOptions.upToMember`), since it is forwarded as the node sent it.
   */
  readonly answerHead?: (answer: AnswerView, params: unknown) => AnswerHead | undefined;
  /**
   * The lowest network head (in the units of the family's probe head: a block height, a slot) a node must
   * have reached to serve a call with `params` (a Solana call's `minContextSlot`), or undefined when any
   * node may. `route` leaves out the upstreams known to be below it; when every candidate is known to be
   * below it, the call goes to them as routed and the node's own answer says so.
   */
  readonly minHead?: (params: unknown) => number | undefined;
  /**
   * Reads a node's error answer to the call for what it really says, on the node that gave it: return
   * `{ result }` to answer the client with that result instead (a resent transaction the node already
   * has is answered with its hash), or undefined to pass the error on. `input.ask` calls that same node,
   * uncharged. A hook that throws, or an `ask` that fails, leaves the node's error as the answer.
   */
  readonly onNodeError?: (error: JsonRpcErrorObject, input: NodeErrorInput) => MaybePromise<NodeErrorSettlement | undefined>;
  /**
   * Inspects the upstream's answer; throw a {@link GatewayError} to replace it with an error. The answer
   * is read from the node's bytes by scanning (`answer.length('result')` counts a result's elements
   * without building them); `answer.parsed()` parses it whole when a check needs more.
   */
  readonly checkResult?: (answer: AnswerView, ctx: RequestContext) => void;
  /** One line for the docs. */
  readonly description?: string;
  /**
   * Set for a method the family knows and refuses on purpose (a signing method a shared gateway cannot
   * serve): `validate` answers `METHOD_NOT_SUPPORTED` with this message, before anything is charged.
   */
  readonly refused?: string;
  /**
   * The plans whose keys may call the method (an opt-in namespace sold as an add-on); every plan when
   * absent. `validate` refuses a key of another plan with `FORBIDDEN`, before anything is charged.
   */
  readonly plans?: readonly string[];
}

/** A health probe: the call a family makes to see whether an upstream is alive. */
export interface HealthProbe {
  /** Method to call. */
  readonly method: string;
  /** Its parameters. */
  readonly params: readonly unknown[];
  /**
   * Reads the upstream's head (a block height, a slot...) from the probe's result, in the family's own
   * units; undefined when the result carries none. Without it, heads and lag are not tracked.
   */
  readonly head?: (result: unknown) => number | undefined;
}

/**
 * A network family: the methods a kind of network offers, each with its schema and credit cost, as
 * a family plugin defines them. A network combines one or more families.
 */
export interface NetworkFamily {
  /** Unique family name, referenced by networks in the config (`families: [evm, polygon]`). */
  readonly name: string;
  /** The methods the family offers. */
  readonly methods: readonly MethodDefinition[];
  /** How to check an upstream of this family is alive. */
  readonly probe?: HealthProbe;
  /** How calls travel to upstreams (default: JSON-RPC over HTTP POST). */
  readonly protocol?: CallProtocol;
  /**
   * True for a node's error that is the call's own outcome, whatever its words (a contract's revert, for
   * instance): the default protocol then never takes it for the provider's capacity error and answers
   * the client with it.
   */
  readonly isCallError?: (error: { readonly code?: unknown; readonly message?: unknown }) => boolean;
  /** Subscriptions the family offers over connection-holding transports (`eth_subscribe`), if any. */
  readonly subscriptions?: SubscriptionSupport;
  /**
   * Namespaces (the part of a method's name before its first `_`) in which the family's node software
   * administers the node rather than serves the chain (accounts, mining, peers, test-chain state): a
   * network's `unknownMethods: forward` never forwards their methods by namespace, only the ones named
   * one by one. Compared without regard to case.
   */
  readonly adminNamespaces?: readonly string[];
  /**
   * Namespaces the family's settings switched off (a disabled tracing namespace, say): no method in
   * them is forwarded, even one named in `unknownMethods.methods`. Compared without regard to case.
   */
  readonly closedNamespaces?: readonly string[];
  /**
   * The family rebuilt for a reloaded configuration (its plugin's settings read again: prices, limits,
   * opt-in methods), used by the calls that start after the reload; throw a `ConfigError` to refuse the
   * reload whole. A family without it stays as it was built.
   */
  readonly reconfigure?: (config: GatewayConfig) => NetworkFamily;
}

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
  /**
   * Present when the protocol carries several calls in one upstream request (a JSON-RPC batch): dispatch
   * then sends the calls of one client batch that go to the same upstream together.
   */
  readonly batch?: BatchCodec;
}

/** How a {@link CallProtocol} puts several calls in one upstream request and finds each call's answer in the reply. */
export interface BatchCodec {
  /** One request carrying every call, each under an id unique within the request. */
  encode(calls: readonly RequestContext[]): UpstreamRequest;
  /**
   * Each call's answer, in the order of `calls`, as if the call had been sent alone (its own id restored),
   * or the failure that stands for a missing answer; undefined when the reply is not a batch answer at all
   * (an upstream that does not take batches, or an error for the whole request).
   */
  split(reply: UpstreamReply, calls: readonly RequestContext[]): Array<UpstreamReply | UpstreamFailure> | undefined;
}

/**
 * The calls of one client batch, as dispatch sees them: calls that reach dispatch for the same upstream
 * at about the same time travel in one upstream request (see {@link BatchCodec}). The engine makes one
 * per client batch; a call outside a batch has none.
 */
export interface CallBatch {
  /**
   * Sends `request` for `ctx` to `upstream`, together with the other calls of the batch bound for it when
   * the protocol can batch, and resolves with the call's own answer. Rejects like {@link Upstream.request}.
   */
  send(ctx: RequestContext, upstream: Upstream, request: UpstreamRequest, timeoutMs: number, signal: CancelSignal): Promise<UpstreamReply>;
  /**
   * Waits for `promise` on behalf of `ctx`, telling the batch that the call is held by something outside
   * it (an identical call in flight, for instance), so the calls waiting in dispatch do not wait for it.
   */
  idle<T>(ctx: RequestContext, promise: Promise<T>): Promise<T>;
}

/** A method of a network, with its compiled parameter check. */
export interface NetworkMethod {
  /** The method as its family defines it. */
  readonly definition: MethodDefinition;
  /** Checks and normalizes the parameters; returns an error message when they are invalid. */
  readonly validate: (params: unknown) => string | undefined;
}

/** What a family's hooks may use of a network: its name, state, options and an uncharged call to its upstreams. */
export interface NetworkRuntime {
  /** The network's name. */
  readonly name: string;
  /** Per-network state that families keep between calls (caches of chain data, for instance). */
  readonly state: Map<string, unknown>;
  /** The network's `options` from the config. */
  readonly options: Readonly<Record<string, unknown>>;
  /**
   * Calls `method` on the network's upstreams, uncharged, as the gateway sends a client's call: the
   * selector's order and breakers, failover within the network's deadline, the method's own timeout.
   * Resolves with the node's result; rejects with the node's error, or with `UPSTREAM_UNAVAILABLE` /
   * `UPSTREAM_TIMEOUT` when no upstream answered. Only primaries are asked: a lookup is not a client's
   * call, and no plan makes it eligible for partner providers.
   */
  rpc(method: string, params: readonly unknown[]): Promise<unknown>;
}

/** A configured network: its families' methods, its upstreams and its call protocol. */
export interface Network extends NetworkRuntime {
  /** The network's config entry. */
  readonly config: NetworkConfig;
  /** Every method its families offer, by name. */
  readonly methods: ReadonlyMap<string, NetworkMethod>;
  /** Its families, in config order. */
  readonly families: readonly NetworkFamily[];
  /** Its upstreams: primaries first, then partners. */
  readonly upstreams: readonly Upstream[];
  /** How calls are encoded for its upstreams and their answers classified. */
  readonly protocol: CallProtocol;
}
