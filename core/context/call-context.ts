import { randomUUID } from 'node:crypto';
import { ContextState } from '../contracts/context-state.js';
import { type Call, type Credentials, type RequestMeta } from '../contracts/call.js';
import { type CallBatch, type Compensation, type RequestContext } from '../contracts/request-context.js';
import { type UpstreamReply } from '../contracts/upstream.js';
import type { ApiKeyRecord, Plan } from '../contracts/keys.js';
import type { MethodDefinition } from '../contracts/request-context.js';
import type { Network } from '../contracts/request-context.js';
import type { DebitReceipt } from '../contracts/credit-ledger.js';
import type { Upstream } from '../contracts/upstream.js';
import type { GatewayError } from '../errors/gateway-error.js';
import type { ContextInit } from '../contracts/runtime.js';
import { CancelToken } from './cancel-signal.js';
import { type CancelSignal } from '../contracts/cancel-signal.js';

const NO_META: RequestMeta = Object.freeze({});

/**
 * The core's {@link RequestContext}: every field exists from the start, so all contexts share one shape
 * (stages only assign), and the id and plugin state are made only when first read.
 */
export class CallContext implements RequestContext {
  readonly transport: string;
  readonly network: Network;
  readonly credentials: Credentials;
  readonly meta: RequestMeta;
  readonly call: Call;
  readonly batch: CallBatch | undefined;
  readonly startedAt: number;
  readonly compensations: Compensation[] = [];
  key: ApiKeyRecord | undefined = undefined;
  plan: Plan | undefined = undefined;
  method: MethodDefinition | undefined = undefined;
  params: unknown;
  rewritten = false;
  credits: number | undefined = undefined;
  debit: DebitReceipt | undefined = undefined;
  candidates: readonly Upstream[] | undefined = undefined;
  servedBy: Upstream | undefined = undefined;
  reply: UpstreamReply | undefined = undefined;
  cache: 'hit' | 'miss' | undefined = undefined;
  replyHeaders: Record<string, string> | undefined = undefined;
  error: GatewayError | undefined = undefined;
  attempts = 0;
  #id: string | undefined = undefined;
  readonly #token = new CancelToken();
  #abort: AbortController | undefined = undefined;
  #state: ContextState | undefined = undefined;

  constructor(init: ContextInit, startedAt: number) {
    this.transport = init.transport;
    this.network = init.network;
    this.credentials = init.credentials;
    this.meta = init.meta ?? NO_META;
    this.call = init.call;
    this.batch = init.batch;
    const outer = init.signal;
    if (outer !== undefined) this.#follow(outer);
    this.params = init.call.params;
    this.startedAt = startedAt;
  }

  /** Gateway-assigned id of this call (a UUID, made on first read). */
  get id(): string {
    return (this.#id ??= randomUUID());
  }

  /** Aborted when the call is cancelled; the cheap form of {@link CallContext.signal}. */
  get cancelSignal(): CancelSignal {
    return this.#token;
  }

  // The AbortController is made on first read only: an EventTarget per call costs microseconds on the
  // hot path, and dispatch listens to the cheaper cancelSignal.
  get signal(): AbortSignal {
    if (this.#abort !== undefined) return this.#abort.signal;
    const controller = (this.#abort = new AbortController());
    const token = this.#token;
    if (token.aborted) controller.abort(token.reason);
    else token.addEventListener('abort', () => controller.abort(token.reason));
    return controller.signal;
  }

  cancel(reason?: unknown): void {
    this.#token.abort(reason ?? new Error('call cancelled'));
  }

  #follow(outer: AbortSignal): void {
    if (outer.aborted) return this.cancel(outer.reason);
    const follow = (): void => this.cancel(outer.reason);
    outer.addEventListener('abort', follow, { once: true });
    // Let go of the outer signal once this call is cancelled some other way.
    this.#token.addEventListener('abort', () => outer.removeEventListener('abort', follow));
  }

  /** Typed storage for plugins (made on first read). */
  get state(): ContextState {
    return (this.#state ??= new ContextState());
  }
}
