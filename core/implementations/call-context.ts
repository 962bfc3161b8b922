import { randomUUID } from 'node:crypto';
import { ContextState, type Call, type CallBatch, type Compensation, type Credentials, type RequestContext, type RequestMeta, type UpstreamReply } from '../model/context.js';
import type { ApiKeyRecord, Plan } from '../model/keys.js';
import type { MethodDefinition } from '../model/context.js';
import type { Network } from '../model/context.js';
import type { DebitReceipt } from '../model/credit-ledger.js';
import type { Upstream } from '../model/context.js';
import type { GatewayError } from '../leaves/errors/gateway-error.js';
import type { ContextInit } from '../model/runtime.js';

/**
 * A signal that never aborts: the default for calls whose transport cannot cancel them. Upstreams skip
 * it, so undici does not attach a listener to it per request.
 */
export const NEVER_ABORTED: AbortSignal = new AbortController().signal;

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
  #outer: AbortSignal | undefined;
  #abort: AbortController | undefined = undefined;
  #state: ContextState | undefined = undefined;

  constructor(init: ContextInit, startedAt: number) {
    this.transport = init.transport;
    this.network = init.network;
    this.credentials = init.credentials;
    this.meta = init.meta ?? NO_META;
    this.call = init.call;
    this.batch = init.batch;
    this.#outer = init.signal;
    this.params = init.call.params;
    this.startedAt = startedAt;
  }

  /** Gateway-assigned id of this call (a UUID, made on first read). */
  get id(): string {
    return (this.#id ??= randomUUID());
  }

  /** Typed storage for plugins (made on first read). */
  // The controller is made on first use: most calls are never cancelled, and many never read the signal
  // before they are answered from a sync path.
  get signal(): AbortSignal {
    return this.#controller().signal;
  }

  cancel(reason?: unknown): void {
    this.#controller().abort(reason ?? new Error('call cancelled'));
  }

  #controller(): AbortController {
    if (this.#abort !== undefined) return this.#abort;
    const controller = (this.#abort = new AbortController());
    const outer = this.#outer;
    if (outer !== undefined) {
      if (outer.aborted) controller.abort(outer.reason);
      else {
        const follow = (): void => controller.abort(outer.reason);
        outer.addEventListener('abort', follow, { once: true });
        // Let go of the outer signal once this call is cancelled some other way.
        controller.signal.addEventListener('abort', () => outer.removeEventListener('abort', follow), { once: true });
      }
    }
    return controller;
  }

  get state(): ContextState {
    return (this.#state ??= new ContextState());
  }
}
