import type { Observable } from 'rxjs';
import type { DependencyContainer } from 'tsyringe';
import type { Logger } from 'pino';
import type { GatewayConfig, GatewayConfigInput } from '../config/types.js';
import type { Clock } from '../util/clock.js';
import type { Call, Credentials, RequestMeta } from './call.js';
import type { CallBatch, RequestContext } from './request-context.js';
import type { Network } from './request-context.js';
import type { NetworkDirectory } from './network-directory.js';
import type { JsonRpcInput, JsonRpcOutput } from './json-rpc-io.js';
import type { EventMeter, EventRefund } from './metered-event.js';
import type { UsageEvent } from './usage.js';
import type { ApiKeyRecord, Plan } from './keys.js';
import type { MaybePromise } from '../util/maybe-promise.js';
import type { Stage } from './stage.js';
import type { StreamOutcome } from './stream-outcome.js';

/** A key found, live, and on a plan the gateway serves. */
export interface KeyAccess {
  /** The key's record. */
  readonly key: ApiKeyRecord;
  /** The key's plan. */
  readonly plan: Plan;
}

/**
 * Resolves credentials to a key and its plan, or fails with `UNAUTHORIZED`: a missing, unknown or revoked
 * key, or one whose plan the gateway does not serve, are refused alike, so the answer does not reveal
 * which keys exist. Synchronous when the key store is; a refusal is thrown (or the promise rejects).
 */
export type KeyCheck = (credentials: Credentials) => MaybePromise<KeyAccess>;

/** What a transport supplies to create a context. */
export interface ContextInit {
  /** Transport name. */
  readonly transport: string;
  /** The addressed network. */
  readonly network: Network;
  /** The client's credentials. */
  readonly credentials: Credentials;
  /** The call. */
  readonly call: Call;
  /** Facts about the client connection. */
  readonly meta?: RequestMeta;
  /** Aborts the call (client gone). */
  readonly signal?: AbortSignal;
  /** The client batch the call belongs to, if any. */
  readonly batch?: CallBatch;
}

/** The assembled gateway as transports and plugins see it. */
export interface GatewayRuntime {
  /** The resolved configuration: the latest reloaded one for calls that start now. */
  readonly config: GatewayConfig;
  /**
   * Re-reads the configuration (from `config`, or the file the gateway was started with) and swaps it in
   * for the calls that start afterwards: networks and upstreams, plans, the families' prices and limits.
   * Calls in flight and open connections finish on what they started with. A bad configuration rejects
   * with a `ConfigError` listing its problems and changes nothing.
   */
  reload(config?: GatewayConfigInput): Promise<GatewayConfig>;
  /** The gateway's own container. */
  readonly container: DependencyContainer;
  /** The gateway's logger. */
  readonly logger: Logger;
  /** The gateway's clock. */
  readonly clock: Clock;
  /** The served networks. */
  readonly networks: NetworkDirectory;
  /** Creates a context for one call. */
  createContext(init: ContextInit): RequestContext;
  /**
   * Runs one context through the pipeline. Lazy; never errors: a failure is on `ctx.error`. Unsubscribing
   * before the answer cancels the call (see `settleCall` for what cancelling does).
   */
  execute(ctx: RequestContext): Observable<RequestContext>;
  /**
   * The stages `ctx` would run, in order (those of its network's families and its transport), as RxJS
   * operators that run each stage as {@link GatewayRuntime.execute} does: on the call alone, held to the
   * one-context contract where it runs. `of(ctx).pipe(...gateway.stagesOf(ctx), settleCall(ctx, gateway))`
   * behaves as `execute`, which runs the same stages fused into one loop.
   */
  stagesOf(ctx: RequestContext): readonly Stage[];
  /**
   * What happens when a call leaves the pipeline, once per call: its usage is recorded and the call
   * observers see it. `execute` and `settleCall` call it; a transport never needs to.
   */
  finishCall(ctx: RequestContext): void;
  /**
   * Handles a JSON-RPC body (single call or batch) addressed to a network, answering with the status,
   * headers and body a transport should send. Lazy; never errors.
   */
  jsonRpc(input: JsonRpcInput): Observable<JsonRpcOutput>;
  /**
   * Charges one event delivered outside a call (a subscription's notification) to a key's daily balance
   * and records it in usage. The call that opened the stream went through the pipeline; its events come
   * here. Deliver the event only when the answer is `ok`.
   */
  readonly meterEvent: EventMeter;
  /**
   * Gives back what {@link GatewayRuntime.meterEvent} charged for events that did not reach the client
   * after all (the connection closed before they were written): once per charge, usage included.
   */
  readonly refundEvents: EventRefund;
  /**
   * The `authenticate` stage's key check (key found, not revoked, plan served), for a transport that
   * admits a client before any call: a WebSocket upgrade, for instance.
   */
  readonly checkKey: KeyCheck;
  /**
   * Adds an event to the gateway's usage recorder, the one way every usage record goes (calls, metered
   * events, bytes a transport streamed after its call). Never throws: a failing recorder is logged.
   */
  readonly recordUsage: (event: UsageEvent) => void;
  /**
   * Records the usage of a call the pipeline answered with a stream, once the transport relaying it
   * reached the end (or gave up): the pipeline records every other call when it leaves, and leaves a
   * streamed one to its transport, so each call is one usage record with the bytes it served. Call it
   * once per such call, also when the client left before the stream began (`bytes: 0`, `failed: true`).
   */
  recordStreamedCall(ctx: RequestContext, outcome: StreamOutcome): void;
}
