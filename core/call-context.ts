import { randomUUID } from 'node:crypto';
import { ContextState, type Call, type Compensation, type Credentials, type RequestContext, type RequestMeta, type UpstreamReply } from './context.js';
import type { ApiKeyRecord, Plan } from './metering/keys.js';
import type { MethodDefinition } from './family.js';
import type { Network } from './network.js';
import type { DebitReceipt } from './metering/credit-ledger.js';
import type { Upstream } from './upstream/upstream.js';
import type { GatewayError } from './errors/gateway-error.js';
import type { ContextInit } from './runtime.js';

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
  readonly signal: AbortSignal;
  readonly startedAt: number;
  readonly compensations: Compensation[] = [];
  key: ApiKeyRecord | undefined = undefined;
  plan: Plan | undefined = undefined;
  method: MethodDefinition | undefined = undefined;
  params: unknown;
  rewritten = false;
  debit: DebitReceipt | undefined = undefined;
  candidates: readonly Upstream[] | undefined = undefined;
  servedBy: Upstream | undefined = undefined;
  reply: UpstreamReply | undefined = undefined;
  error: GatewayError | undefined = undefined;
  attempts = 0;
  #id: string | undefined = undefined;
  #state: ContextState | undefined = undefined;

  constructor(init: ContextInit, startedAt: number) {
    this.transport = init.transport;
    this.network = init.network;
    this.credentials = init.credentials;
    this.meta = init.meta ?? NO_META;
    this.call = init.call;
    this.signal = init.signal ?? NEVER_ABORTED;
    this.params = init.call.params;
    this.startedAt = startedAt;
  }

  /** Gateway-assigned id of this call (a UUID, made on first read). */
  get id(): string {
    return (this.#id ??= randomUUID());
  }

  /** Typed storage for plugins (made on first read). */
  get state(): ContextState {
    return (this.#state ??= new ContextState());
  }
}
