import type { Server } from 'node:http';
import type { DependencyContainer } from 'tsyringe';
import type { Logger } from 'pino';
import { defer, of, type Observable } from 'rxjs';
import type { GatewayConfig } from '../config/types.js';
import type { RequestContext } from '../contracts/request-context.js';
import { CallContext } from '../context/call-context.js';
import { NetworkDirectory } from '../network/network-directory.js';
import type { Transport } from '../contracts/plugin.js';
import type { ContextInit, GatewayRuntime } from '../contracts/runtime.js';
import type { Clock } from '../util/clock.js';
import type { JsonRpcOutput } from '../jsonrpc/json-rpc-engine.js';
import { encodeError } from '../jsonrpc/encode.js';
import { Errors } from '../errors/catalog.js';
import type { Gateway, GatewayOptions, HandleRequest } from './gateway.js';
import type { MountedGateway, MountOptions, MountRoutes } from './mount.js';
import { transportHandlers } from './transport-handlers.js';
import { Servers } from './servers.js';
import { eventMetering } from './event-metering.js';
import { buildGeneration, type Generation } from './generation.js';
import { Drains } from './drains.js';
import { held, heldHandlers } from './generation-holds.js';
import { createReloader, type Reload } from './reload.js';
import type { Started } from './started.js';

/** What a {@link LiveGateway} is made of: everything assembled before anything starts. */
export interface LiveGatewayParts {
  readonly options: GatewayOptions;
  /** The configuration the gateway starts with. */
  readonly config: GatewayConfig;
  readonly container: DependencyContainer;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly transports: readonly Transport[];
  /** What startup started, stopped by `close()`. */
  readonly started: Started;
}

/**
 * A gateway as it runs: the generation new calls use (replaced whole by a reload, in one assignment),
 * the handlers, servers and drains around it. Before {@link LiveGateway.begin}, it serves the starting
 * configuration and no network (plugins see it so in `start`); calls fail as not started.
 */
export class LiveGateway implements Gateway {
  readonly container: DependencyContainer;
  readonly logger: Logger;
  readonly clock: Clock;
  /** Every generation whose upstreams are still open. */
  readonly drains = new Drains();
  readonly recordUsage: GatewayRuntime['recordUsage'];
  readonly meterEvent: GatewayRuntime['meterEvent'];
  readonly refundEvents: GatewayRuntime['refundEvents'];
  readonly recordStreamedCall: GatewayRuntime['recordStreamedCall'];
  readonly #parts: LiveGatewayParts;
  #current: Generation | undefined;
  readonly #reload: Reload;
  readonly #servers = new Servers();
  readonly #handlers: (prefix?: string, routes?: MountRoutes) => MountedGateway;
  readonly #publicRoutes: MountRoutes;
  readonly #root: MountedGateway;
  #adminServer: Server | undefined;
  #closing: Promise<void> | undefined;

  constructor(parts: LiveGatewayParts) {
    this.#parts = parts;
    ({ container: this.container, logger: this.logger, clock: this.clock } = parts);
    ({ recordUsage: this.recordUsage, meterEvent: this.meterEvent, refundEvents: this.refundEvents, recordStreamedCall: this.recordStreamedCall } = eventMetering(parts.container, parts.clock, parts.logger));
    // Fixed at creation, as the ports are: a reload does not move routes between listeners.
    this.#publicRoutes = parts.config.server.adminListen === undefined ? 'all' : 'public';
    this.#handlers = transportHandlers(parts.transports, this, parts.logger);
    this.#root = this.#mount(undefined, this.#publicRoutes);
    this.#reload = createReloader({
      configFile: parts.options.configFile,
      logger: parts.logger,
      current: this.#now,
      build: (config, families) => buildGeneration(config, families, this.#now().kit),
      swap: (next) => {
        const previous = this.#now();
        this.#current = next;
        previous.drain.retire();
        // Probes follow the new networks; the old ones' health is no longer needed by new calls.
        void Promise.resolve(next.deps.selector.stop?.()).then(() => next.deps.selector.start?.(next.networks));
      },
    });
  }

  /** Serves `first` from now on: the end of startup. */
  begin(first: Generation): void {
    this.#current = first;
  }

  readonly #now = (): Generation => this.#current ?? notStarted();

  /** The generation new calls use (throws before {@link LiveGateway.begin}). */
  get generation(): Generation { return this.#now(); }

  get config(): GatewayConfig { return this.#current?.config ?? this.#parts.config; }
  get networks(): NetworkDirectory { return this.#current?.directory ?? NOT_STARTED; }
  get adminServer(): Server | undefined { return this.#adminServer; }

  readonly reload: GatewayRuntime['reload'] = (input) => (input === undefined && this.#parts.options.reloadVia !== undefined ? this.#parts.options.reloadVia() : this.#reload(input));
  readonly createContext = (init: ContextInit): RequestContext => new CallContext(init, this.clock.now());
  readonly execute = (ctx: RequestContext): Observable<RequestContext> => {
    const generation = this.#now();
    // Held on the generation that built the call's network (else the current one): a reload does not
    // close the upstreams of a call it overtook, nor those a connection opened before it still uses.
    return generation.pipeline.execute(ctx, this.drains.ownerOf(ctx.network) ?? generation.drain);
  };
  readonly stagesOf: GatewayRuntime['stagesOf'] = (ctx) => this.#now().pipeline.stagesOf(ctx);
  readonly finishCall: GatewayRuntime['finishCall'] = (ctx) => this.#now().finishCall(ctx);
  // Each call reads it: a reload's batch limits apply to the requests that arrive after it.
  readonly jsonRpc: GatewayRuntime['jsonRpc'] = (input) => this.#now().jsonRpc(input);
  readonly checkKey: GatewayRuntime['checkKey'] = (credentials) => this.#now().checkKey(credentials);
  readonly listener: Gateway['listener'] = (req, res) => this.#root.listener(req, res);
  readonly upgrade: Gateway['upgrade'] = (req, socket, head) => {
    if (!this.#root.upgrade(req, socket, head)) socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  };

  mount(options: MountOptions = {}): MountedGateway {
    return this.#mount(options.prefix, options.routes ?? this.#publicRoutes);
  }

  // Unsubscribing before the answer cancels the call like a client going away: the pipeline aborts the
  // upstream request and refunds the call.
  handle(request: HandleRequest): Observable<JsonRpcOutput> {
    return defer(() => {
      const generation = this.#now();
      const network = generation.directory.get(request.network);
      if (network === undefined) return jsonRpcNotFound(request.network);
      return held(generation.drain, generation.jsonRpc({ transport: request.transport ?? 'direct', network, credentials: { apiKey: request.apiKey }, body: request.body, signal: request.signal }));
    });
  }

  async listen(port = this.config.server.port, host = this.config.server.host): Promise<Server> {
    const admin = this.#parts.config.server.adminListen;
    if (admin !== undefined && this.#adminServer === undefined) this.#adminServer = await this.#servers.serve(this.#mount(undefined, 'admin'), admin.port, admin.host);
    return this.#servers.serve(this.#root, port, host);
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      await Promise.allSettled(this.#parts.transports.map((t) => t.close?.()));
      await this.#servers.close();
      await this.#parts.started.stopAll();
    })();
    return this.#closing;
  }

  #mount(prefix: string | undefined, routes: MountRoutes): MountedGateway {
    return heldHandlers(this.#handlers(prefix, routes), () => this.#current?.drain);
  }
}

const NOT_STARTED = new NetworkDirectory([]);

function notStarted(): never {
  throw new Error('the gateway is not started');
}

function jsonRpcNotFound(network: string): Observable<JsonRpcOutput> {
  const body = encodeError(null, { code: Errors.NOT_FOUND.code, message: `unknown network "${network}"` });
  return of({ status: Errors.NOT_FOUND.httpStatus, headers: {}, body, contexts: [] });
}
