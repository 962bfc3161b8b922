import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createHash } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { container as rootContainer, type DependencyContainer, type InjectionToken } from 'tsyringe';
import { pino, type Logger } from 'pino';
import { of, type Observable } from 'rxjs';
import type { GatewayConfig, GatewayConfigInput } from '../config/types.js';
import { ConfigError, resolveConfig } from '../config/load-config.js';
import type { NetworkFamily, RequestContext } from '../contracts/request-context.js';
import { CallContext } from '../context/call-context.js';
import { NetworkDirectory } from '../network/network-directory.js';
import { Tokens, type TollgatePlugin, type Transport } from '../contracts/plugin.js';
import { systemClock, type Clock } from '../util/clock.js';
import { StaticKeyStore } from '../keys/config-key-store.js';
import { hashSecretSync } from '../keys/secret-hash.js';
import { MemoryCreditLedger } from '../metering/memory-credit-ledger.js';
import { MemoryFilterStore } from '../network/memory-filter-store.js';
import { MemoryPinStore } from '../network/memory-pin-store.js';
import { MemoryRateLimiter } from '../metering/rate-limiter.js';
import { FailoverSelector } from '../upstream/failover-selector.js';
import { MemorySharedHeads } from '../upstream/memory-shared-heads.js';
import { MemoryUpstreamBudgets } from '../upstream/memory-upstream-budgets.js';
import { MemoryDedupMarks } from '../metering/memory-dedup-marks.js';
import { buildPipeline, type BuiltPipeline } from '../pipeline/pipeline.js';
import { Started } from './started.js';
import { assemble, assemblyError } from './register-plugins.js';
import type { StageDefinition, StageDependencies } from '../contracts/stage.js';
import { createJsonRpcEngine, type JsonRpcInput, type JsonRpcOutput } from '../jsonrpc/json-rpc-engine.js';
import type { ContextInit, GatewayRuntime, KeyCheck } from '../contracts/runtime.js';
import { createKeyCheck } from '../keys/key-check.js';
import { PlanBook } from '../keys/plan-book.js';
import { PlanRegistryToken } from '../keys/plan-registry.js';
import { encodeError } from '../jsonrpc/encode.js';
import { MemoryUsageRecorder } from '../usage/usage.js';
import { type CallObserver, type UsageRecorder } from '../contracts/usage.js';
import { Errors } from '../errors/catalog.js';
import type { MountedGateway, MountOptions, MountRoutes } from './mount.js';
import { PluginError, type PluginErrorCode, type PluginErrorOptions } from '../plugin/plugin-error.js';
import { EmbeddedUpstreams } from '../network/embedded-upstreams.js';
import { createNetworkRpc } from '../network/network-rpc.js';
import { buildNetworks, type BuiltNetworks } from '../network/build-networks.js';
import { callFinisher, streamedCallRecorder } from '../metering/call-accounting.js';
import { transportHandlers } from './transport-handlers.js';
import { createEventMeter, createEventRefund } from '../metering/event-meter.js';
import { usageWriter } from '../usage/usage-writer.js';
import { createReloader } from './reload.js';

export { PluginError, type PluginErrorCode, type PluginErrorOptions };

/** How to assemble a gateway. */
export interface GatewayOptions {
  /** The configuration, as written by a user (defaults are applied) or already resolved. */
  readonly config: GatewayConfigInput | GatewayConfig;
  /** Plugins, registered in this order. */
  readonly plugins?: readonly TollgatePlugin[];
  /** Time source (tests inject one to cross a UTC day boundary). */
  readonly clock?: Clock;
  /** Logger (default: pino at the config's level). */
  readonly logger?: Logger;
  /** The file `config` was read from: `reload()` without a configuration reads it again. */
  readonly configFile?: string;
  /**
   * What `reload()` without a configuration does instead of re-reading {@link GatewayOptions.configFile}.
   * A worker of a group passes a request to its primary, which reads the file once and reloads every
   * worker with it (this one included, through `reload(config)`), so that a reload asked of one worker
   * (the admin API's) reaches the whole group. Resolves with the configuration now served.
   */
  readonly reloadVia?: () => Promise<GatewayConfig>;
}

/** A running gateway: mount its listener and upgrade handler in a Node server, or call it directly. */
export interface Gateway extends GatewayRuntime {
  /**
   * A Node `request` listener serving every transport (with `server.adminListen`, the clients' only:
   * `mount({ routes: 'admin' })` gives the operator's). Unclaimed requests get a JSON-RPC 404.
   */
  readonly listener: (req: IncomingMessage, res: ServerResponse) => void;
  /** A Node `upgrade` listener for transports that upgrade (WebSocket). Unclaimed upgrades are refused. */
  readonly upgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
  /**
   * Handlers for a server of your own that has its own routes: a listener that is also
   * Connect/Express middleware (what the gateway does not serve goes to `next`), and an upgrade
   * handler that leaves other upgrades alone, optionally under a path prefix.
   *
   * @example
   * ```ts
   * import { createServer } from 'node:http';
   *
   * const tollgate = gateway.mount({ prefix: '/rpc' });
   * const server = createServer((req, res) => tollgate.listener(req, res, () => myRoutes(req, res)));
   * server.on('upgrade', (req, socket, head) => { if (!tollgate.upgrade(req, socket, head)) socket.destroy(); });
   * // clients call http://host/rpc/eth/v3/<API_KEY> and ws://host/rpc/eth/ws/v3/<API_KEY>
   * ```
   */
  mount(options?: MountOptions): MountedGateway;
  /**
   * Handles a JSON-RPC body without any transport: for a queue worker or a serverless function.
   * Lazy: each subscription runs (and charges) the call once. Unsubscribing before the answer (as
   * RxJS `timeout` does) or aborting `request.signal` cancels the call: the upstream request is
   * aborted and the call is not charged.
   *
   * @example
   * ```ts
   * gateway.handle({ network: 'eth', apiKey: KEY, body: { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] } })
   *   .subscribe(({ status, body }) => console.log(status, String(body)));
   * ```
   */
  handle(request: HandleRequest): Observable<JsonRpcOutput>;
  /**
   * Starts a Node HTTP server with the listener and upgrade handler on `port` (default: the config's),
   * and resolves with it. When the config sets `server.adminListen`, the first call also starts the
   * operator listener there (see {@link Gateway.adminServer}); the returned server then serves the
   * clients' routes only.
   */
  listen(port?: number, host?: string): Promise<Server>;
  /**
   * The operator listener (admin API, dashboard, metrics) that {@link Gateway.listen} started for
   * `server.adminListen`; undefined when the config has none or `listen` was not called.
   */
  readonly adminServer: Server | undefined;
  /** Stops transports, plugins, upstream pools and embedded upstreams. Idempotent. */
  close(): Promise<void>;
}

/** A transport-free JSON-RPC request for {@link Gateway.handle}. */
export interface HandleRequest {
  /** The network's name. */
  readonly network: string;
  /** The API key. */
  readonly apiKey: string;
  /** A JSON-RPC request or batch: an object, an array, or its JSON text. */
  readonly body: unknown;
  /** Name recorded as the transport (default `direct`). */
  readonly transport?: string;
  /** Cancels the call (as unsubscribing does): the upstream request is aborted and the call refunded. */
  readonly signal?: AbortSignal;
}

function resolveAllOptional<T>(container: DependencyContainer, token: InjectionToken<T>): T[] {
  return container.isRegistered(token, true) ? container.resolveAll<T>(token) : [];
}

/** The loggable id of a configured key: its own id, or a hash prefix; never the key. */
export function keyIdOf(key: string, id?: string): string {
  return id ?? `key-${createHash('sha256').update(key).digest('hex').slice(0, 8)}`;
}

/**
 * A gateway's own container with the core's bindings, which plugins may replace: clock, logger, the
 * config's keys, and the in-memory ledger, rate limiter, shared heads, upstream selector, usage
 * recorder and filter store. Constructs them only; none starts anything.
 */
export function coreContainer(config: GatewayConfig, clock: Clock, logger: Logger): DependencyContainer {
  const container = rootContainer.createChildContainer();
  container.register(Tokens.Clock, { useValue: clock });
  container.register(Tokens.Logger, { useValue: logger });
  // Only the scrypt hash of a key's secret is kept, in the key store and in the (copied) resolved config alike.
  for (const k of config.keys) {
    if (k.secret === undefined) continue;
    k.secretHash ??= hashSecretSync(k.secret);
    delete k.secret;
  }
  container.register(Tokens.KeyStore, {
    useValue: new StaticKeyStore(config.keys.map((k) => [k.key, { id: keyIdOf(k.key, k.id), plan: k.plan, settings: k.settings, secretHash: k.secretHash }] as const)),
  });
  container.register(Tokens.CreditLedger, { useValue: new MemoryCreditLedger() });
  container.register(Tokens.RateLimiter, { useValue: new MemoryRateLimiter() });
  container.register(Tokens.SharedHeads, { useValue: new MemorySharedHeads() });
  container.register(Tokens.UpstreamBudgets, { useValue: new MemoryUpstreamBudgets() });
  container.register(Tokens.UpstreamSelector, { useValue: new FailoverSelector({ config, logger, sharedHeads: () => container.resolve(Tokens.SharedHeads) }) });
  container.register(Tokens.UsageRecorder, { useValue: new MemoryUsageRecorder() });
  container.register(Tokens.FilterStore, { useValue: new MemoryFilterStore() });
  container.register(Tokens.PinStore, { useValue: new MemoryPinStore() });
  container.register(Tokens.DedupMarks, { useValue: new MemoryDedupMarks() });
  return container;
}

/**
 * Assembles a gateway. First, without any I/O: applies the config, registers the core's defaults and then
 * every plugin into a container of the gateway's own, and checks families and stage order. Then starts,
 * in order: the plugins (`start`), the embedded upstreams and upstream pools, the pipeline and the
 * upstream selector's health checks. When any of it fails, what had started is stopped in reverse order
 * and the promise rejects with a {@link PluginError}: nothing is left running, open or scheduled.
 *
 * @example
 * ```ts
 * import 'reflect-metadata';
 * import { createGateway } from 'tollgate';
 * import { httpTransport } from 'tollgate/plugins/http';
 * import { evmFamily } from 'tollgate/plugins/evm';
 *
 * const gateway = await createGateway({
 *   config: { networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: 'http://127.0.0.1:8545' }] }],
 *             keys: [{ key: 'my-api-key-123', plan: 'growth' }] },
 *   plugins: [httpTransport(), evmFamily()],
 * });
 * await gateway.listen(8080);
 * ```
 */
export async function createGateway(options: GatewayOptions): Promise<Gateway> {
  let config = resolveConfig(options.config);
  const plugins = options.plugins ?? [];

  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? pino({ level: config.log.level, base: { service: 'tollgate' } });
  const container = coreContainer(config, clock, logger);
  // Every problem at once (each plugin's settings, the families and embedded upstreams networks name).
  const assembled = assemble(container, plugins, config);
  if (assembled.problems.length > 0) throw assemblyError(assembled.problems);
  let families: ReadonlyMap<string, NetworkFamily> = assembled.families;
  const transports = resolveAllOptional<Transport>(container, Tokens.Transport);

  // Filled in during startup, before createGateway resolves: no request can reach them earlier.
  let directory = new NetworkDirectory([]);
  let pipeline: BuiltPipeline = {
    execute: () => { throw new Error('the gateway is not started'); },
    stagesOf: () => { throw new Error('the gateway is not started'); },
  };
  // Usage and observers of a call leaving the pipeline; set once the plugins started.
  let finishCall: (ctx: RequestContext) => void = () => { throw new Error('the gateway is not started'); };
  const createContext = (init: ContextInit): RequestContext => new CallContext(init, clock.now());
  const jsonRpcFor = (server: GatewayConfig['server']): GatewayRuntime['jsonRpc'] => createJsonRpcEngine({
    createContext,
    execute: (ctx) => pipeline.execute(ctx),
    maxBatchSize: server.maxBatchSize,
    batchConcurrency: server.batchConcurrency,
    servedByHeader: server.servedByHeader,
  });
  let jsonRpc = jsonRpcFor(config.server);

  // Store plugins open their ledger and usage recorder in start: resolve them on first use, not now.
  const recordUsage = usageWriter(() => container.resolve<UsageRecorder>(Tokens.UsageRecorder), logger);
  let eventMeter: ReturnType<typeof createEventMeter> | undefined;
  const meterEvent: ReturnType<typeof createEventMeter> = (event) =>
    (eventMeter ??= createEventMeter(container.resolve(Tokens.CreditLedger), recordUsage, clock))(event);
  let eventRefund: ReturnType<typeof createEventRefund> | undefined;
  const refundEvents: ReturnType<typeof createEventRefund> = (charge, events) =>
    (eventRefund ??= createEventRefund(container.resolve(Tokens.CreditLedger), recordUsage, logger))(charge, events);
  // The config's plans and the managed ones, in memory: a key's plan never costs a store round trip.
  const plans = new PlanBook(() => config, logger);
  // Key stores may be opened by plugins in start: build the check on first use.
  let keyCheck: KeyCheck | undefined;
  const checkKey: KeyCheck = (credentials) => (keyCheck ??= createKeyCheck(container.resolve(Tokens.KeyStore), config, plans.get))(credentials);
  const started = new Started(logger);
  let closing: Promise<void> | undefined;
  const servers = new Set<Server>();
  // Fixed at creation, as the ports are: a reload does not move routes between listeners.
  const adminListen = config.server.adminListen;
  const publicRoutes: MountRoutes = adminListen === undefined ? 'all' : 'public';
  let adminServer: Server | undefined;
  const serve = async (handlers: MountedGateway, port: number, host: string): Promise<Server> => {
    const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => handlers.listener(req, res));
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      if (!handlers.upgrade(req, socket, head)) socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    });
    // No automatic `100 Continue`: a transport sends it (continueBody) once it accepts the body, so a
    // body over the limit is refused before the client sends it.
    server.on('checkContinue', (req, res) => handlers.listener(req, res));
    servers.add(server);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => { server.off('error', reject); resolve(); });
    });
    return server;
  };

  const gateway: Gateway = {
    get config() {
      return config;
    },
    reload: (input) => (input === undefined && options.reloadVia !== undefined ? options.reloadVia() : reloader.reload(input)),
    container,
    logger,
    clock,
    get networks() {
      return directory;
    },
    createContext,
    execute: (ctx) => pipeline.execute(ctx),
    stagesOf: (ctx) => pipeline.stagesOf(ctx),
    finishCall: (ctx) => finishCall(ctx),
    // Each call reads it: a reload's batch limits apply to the requests that arrive after it.
    jsonRpc: (input) => jsonRpc(input),
    meterEvent,
    refundEvents,
    recordUsage,
    recordStreamedCall: streamedCallRecorder(recordUsage, clock),
    checkKey,
    listener(req, res) {
      root.listener(req, res);
    },
    upgrade(req, socket, head) {
      if (!root.upgrade(req, socket, head)) socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    },
    mount(options = {}) {
      return mount(options.prefix, options.routes ?? publicRoutes);
    },
    get adminServer() {
      return adminServer;
    },
    handle(request) {
      const network = directory.get(request.network);
      if (network === undefined) return jsonRpcNotFound(request.network);
      // Unsubscribing before the answer cancels the call like a client going away: the pipeline aborts the
      // upstream request and refunds the call.
      return jsonRpc({ transport: request.transport ?? 'direct', network, credentials: { apiKey: request.apiKey }, body: request.body, signal: request.signal });
    },
    async listen(port = config.server.port, host = config.server.host) {
      if (adminListen !== undefined && adminServer === undefined) {
        adminServer = await serve(mount(undefined, 'admin'), adminListen.port, adminListen.host);
      }
      return serve(root, port, host);
    },
    close() {
      closing ??= (async () => {
        await Promise.allSettled(transports.map((t) => t.close?.()));
        await Promise.allSettled([...servers].map((s) => new Promise<void>((resolve) => { s.close(() => resolve()); s.closeAllConnections(); })));
        await started.stopAll();
      })();
      return closing;
    },
  };
  const mount = transportHandlers(transports, gateway, logger);
  const root = mount(undefined, publicRoutes);

  for (const plugin of plugins) {
    await started.start(`plugin "${plugin.name}"`, () => plugin.start?.(gateway), () => plugin.stop?.(), plugin.name);
  }
  // Managed plans are read before the first call can need one, and followed until the gateway stops.
  await started.start('the managed plans', async () => {
    if (container.isRegistered(PlanRegistryToken, true)) await plans.follow(container.resolve(PlanRegistryToken));
  }, () => plans.stop());
  // Resolved once the plugins started (stores open in start); the networks' own calls need them too.
  let deps!: StageDependencies;
  await started.start('the gateway\'s services', () => {
    deps = {
      config,
      container,
      keys: container.resolve(Tokens.KeyStore),
      plans: plans.get,
      ledger: container.resolve(Tokens.CreditLedger),
      limiter: container.resolve(Tokens.RateLimiter),
      selector: container.resolve(Tokens.UpstreamSelector),
      clock,
      logger,
    };
  });
  const embedded = new EmbeddedUpstreams(resolveAllOptional(container, Tokens.EmbeddedUpstream));
  let built: BuiltNetworks | undefined;
  await started.start('the networks', async () => {
    try {
      built = await buildNetworks(config, families, embedded, createNetworkRpc(deps));
    } finally {
      // Stopped with the rest, also when only some embedded upstreams came up.
      started.add('embedded upstreams', () => embedded.stop());
    }
  }, () => Promise.allSettled(built!.upstreams.map((u) => u.close())));
  const { networks } = built!;
  directory = new NetworkDirectory(networks);

  const finished = (finishCall = callFinisher(
    recordUsage,
    resolveAllOptional<CallObserver>(container, Tokens.CallObserver),
    clock,
    logger,
  ));
  await started.start('the pipeline', () => {
    pipeline = buildPipeline(deps, resolveAllOptional<StageDefinition>(container, Tokens.Stage), finished);
  });
  // Health probes and breaker trials run for the gateway's lifetime; close() stops them.
  await started.start('the upstream selector', () => deps.selector.start?.(networks), () => deps.selector.stop?.());
  // After the selector listens to them: loading the known heads raises its floors.
  const heads = container.resolve(Tokens.SharedHeads);
  await started.start('the shared heads', () => heads.start?.(networks.map((n) => n.name)), () => heads.stop?.());

  const stages = resolveAllOptional<StageDefinition>(container, Tokens.Stage);
  const reloader = createReloader({
    configFile: options.configFile,
    families: () => families,
    deps: () => deps,
    embedded,
    logger,
    swap(next) {
      // Everything a new call reads is replaced at once; a call in flight holds its network and pipeline.
      config = next.config;
      families = next.families;
      deps = next.deps;
      jsonRpc = jsonRpcFor(next.config.server);
      keyCheck = undefined;
      pipeline = buildPipeline(next.deps, stages, finished);
      directory = new NetworkDirectory(next.networks);
      // Probes follow the new networks; the old ones' health is no longer needed by new calls.
      void Promise.resolve(deps.selector.stop?.()).then(() => deps.selector.start?.(next.networks));
    },
  });
  started.add('reloaded upstreams', () => Promise.allSettled(reloader.retired().map((u) => u.close())));
  return gateway;
}

function jsonRpcNotFound(network: string): Observable<JsonRpcOutput> {
  const body = encodeError(null, { code: Errors.NOT_FOUND.code, message: `unknown network "${network}"` });
  return of({ status: Errors.NOT_FOUND.httpStatus, headers: {}, body, contexts: [] });
}

/**
 * Everything {@link createGateway} checks before it starts anything, without starting anything: the
 * configuration against the schema and its cross-references, then every plugin's registration (its
 * settings), the families and embedded upstreams the networks name, and the stages' order. Resolves
 * with one line per problem, all at once (empty when the gateway would assemble). What only starting
 * can tell (an unreachable upstream, a port in use) is not checked.
 *
 * @example
 * ```ts
 * const problems = checkGateway({ config, plugins: [httpTransport(), evmFamily()] });
 * if (problems.length > 0) console.error(problems.join('\n'));
 * ```
 */
export function checkGateway(options: Pick<GatewayOptions, 'config' | 'plugins'>): string[] {
  let config: GatewayConfig;
  try {
    config = resolveConfig(options.config);
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
  const container = coreContainer(config, systemClock, pino({ level: 'silent' }));
  return assemble(container, options.plugins ?? [], config).problems.map((p) => p.line);
}
