import type { Observable } from 'rxjs';
import type { DependencyContainer } from 'tsyringe';
import type { Logger } from 'pino';
import type { GatewayConfig } from './config/types.js';
import type { Clock } from './clock.js';
import type { Call, Credentials, RequestContext, RequestMeta } from './context.js';
import type { Network } from './network.js';
import type { NetworkDirectory } from './network-directory.js';
import type { JsonRpcInput, JsonRpcOutput } from './jsonrpc/engine.js';

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
}

/** The assembled gateway as transports and plugins see it. */
export interface GatewayRuntime {
  /** The resolved configuration. */
  readonly config: GatewayConfig;
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
  /** Runs one context through the pipeline. Lazy; never errors: a failure is on `ctx.error`. */
  execute(ctx: RequestContext): Observable<RequestContext>;
  /**
   * Handles a JSON-RPC body (single call or batch) addressed to a network, answering with the status,
   * headers and body a transport should send. Lazy; never errors.
   */
  jsonRpc(input: JsonRpcInput): Observable<JsonRpcOutput>;
}
