import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createHash } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { container as rootContainer, type DependencyContainer, type InjectionToken } from 'tsyringe';
import { pino, type Logger } from 'pino';
import { Observable, of } from 'rxjs';
import type { GatewayConfig, GatewayConfigInput } from './config/types.js';
import { resolveConfig } from './config/load-config.js';
import type { RequestContext } from './context.js';
import { CallContext } from './call-context.js';
import type { NetworkFamily } from './family.js';
import { NetworkDirectory } from './network-directory.js';
import { Tokens, type TollgatePlugin, type Transport } from './plugin.js';
import { systemClock, type Clock } from './clock.js';
import { StaticKeyStore } from './metering/config-key-store.js';
import { hashSecretSync } from './metering/secret-hash.js';
import { MemoryCreditLedger } from './metering/memory-credit-ledger.js';
import { MemoryRateLimiter } from './metering/rate-limiter.js';
import { FailoverSelector } from './upstream/failover-selector.js';
import { buildPipeline } from './pipeline/pipeline.js';
import type { StageDefinition, StageDependencies } from './pipeline/stage.js';
import { createJsonRpcEngine, type JsonRpcInput, type JsonRpcOutput } from './jsonrpc/engine.js';
import type { ContextInit, GatewayRuntime } from './runtime.js';
import { encodeError } from './jsonrpc/encode.js';
import { MemoryUsageRecorder, type CallObserver, type UsageRecorder } from './observe.js';
import { Errors } from './errors/catalog.js';
import type { MountedGateway, MountOptions } from './mount.js';
import { PluginError } from './plugin-error.js';
import { EmbeddedUpstreams } from './embedded-upstreams.js';
import { buildNetworks, type BuiltNetworks } from './build-networks.js';
import { callFinisher } from './call-accounting.js';
import { transportHandlers } from './transport-handlers.js';

export { PluginError };

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
}

/** A running gateway: mount its listener and upgrade handler in a Node server, or call it directly. */
export interface Gateway extends GatewayRuntime {
  /** A Node `request` listener serving every transport. Unclaimed requests get a JSON-RPC 404. */
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
  /** Starts a Node HTTP server with the listener and upgrade handler on `port` (default: the config's). */
  listen(port?: number, host?: string): Promise<Server>;
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

function checkPlugins(plugins: readonly TollgatePlugin[]): void {
  const names = new Set<string>();
  for (const plugin of plugins) {
    if (names.has(plugin.name)) throw new PluginError(`plugin "${plugin.name}" is registered twice`);
    for (const dependency of plugin.dependsOn ?? []) {
      if (!names.has(dependency)) throw new PluginError(`plugin "${plugin.name}" needs plugin "${dependency}" registered before it`);
    }
    names.add(plugin.name);
  }
}

/**
 * Assembles a gateway: applies the config, registers the core's defaults and then every plugin into a
 * container of the gateway's own, starts embedded upstreams, builds the networks and the pipeline, and
 * starts the plugins.
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
  const config = resolveConfig(options.config);
  const plugins = options.plugins ?? [];
  checkPlugins(plugins);

  const container = rootContainer.createChildContainer();
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? pino({ level: config.log.level, base: { service: 'tollgate' } });
  container.register(Tokens.Config, { useValue: config });
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
  container.register(Tokens.UpstreamSelector, { useValue: new FailoverSelector({ config, logger }) });
  container.register(Tokens.UsageRecorder, { useValue: new MemoryUsageRecorder() });
  for (const plugin of plugins) plugin.register(container, config);

  const families = new Map<string, NetworkFamily>();
  for (const family of resolveAllOptional(container, Tokens.Family)) {
    if (families.has(family.name)) throw new PluginError(`network family "${family.name}" is registered twice`);
    families.set(family.name, family);
  }
  const embedded = new EmbeddedUpstreams(resolveAllOptional(container, Tokens.EmbeddedUpstream));
  let built: BuiltNetworks;
  try {
    built = await buildNetworks(config, families, embedded);
  } catch (error) {
    await embedded.stop();
    throw error;
  }
  const { networks, upstreams } = built;
  const directory = new NetworkDirectory(networks);

  const deps: StageDependencies = {
    config,
    container,
    keys: container.resolve(Tokens.KeyStore),
    ledger: container.resolve(Tokens.CreditLedger),
    limiter: container.resolve(Tokens.RateLimiter),
    selector: container.resolve(Tokens.UpstreamSelector),
    clock,
    logger,
  };
  // Health probes and breaker trials run for the gateway's lifetime; close() stops them.
  deps.selector.start?.(networks);
  const status = deps.selector.status?.bind(deps.selector);
  if (status !== undefined) {
    for (const network of networks) {
      network.useHealth(() => new Set(status().filter((u) => u.network === network.name && !u.healthy).map((u) => u.name)));
    }
  }
  const finished = callFinisher(
    container.resolve<UsageRecorder>(Tokens.UsageRecorder),
    resolveAllOptional<CallObserver>(container, Tokens.CallObserver),
    clock,
    logger,
  );
  const execute = buildPipeline(deps, resolveAllOptional<StageDefinition>(container, Tokens.Stage), finished);
  const transports = resolveAllOptional<Transport>(container, Tokens.Transport);

  const createContext = (init: ContextInit): RequestContext => new CallContext(init, clock.now());

  const jsonRpc = createJsonRpcEngine({
    createContext,
    execute,
    maxBatchSize: config.server.maxBatchSize,
    batchConcurrency: config.server.batchConcurrency,
    servedByHeader: config.server.servedByHeader,
  });

  let closing: Promise<void> | undefined;
  const servers = new Set<Server>();

  const gateway: Gateway = {
    config,
    container,
    logger,
    clock,
    networks: directory,
    createContext,
    execute,
    jsonRpc,
    listener(req, res) {
      root.listener(req, res);
    },
    upgrade(req, socket, head) {
      if (!root.upgrade(req, socket, head)) socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    },
    mount(options = {}) {
      return mount(options.prefix);
    },
    handle(request) {
      const network = directory.get(request.network);
      if (network === undefined) return jsonRpcNotFound(request.network);
      // Unsubscribing before the answer cancels the call like a client going away: the upstream request
      // is aborted and the call refunded. The inner run is left to finish so its compensations complete.
      return new Observable<JsonRpcOutput>((subscriber) => {
        const cancel = new AbortController();
        const outer = request.signal;
        const onAbort = (): void => cancel.abort(outer?.reason);
        if (outer?.aborted === true) cancel.abort(outer.reason);
        else outer?.addEventListener('abort', onAbort, { once: true });
        let answered = false;
        const input: JsonRpcInput = { transport: request.transport ?? 'direct', network, credentials: { apiKey: request.apiKey }, body: request.body, signal: cancel.signal };
        jsonRpc(input).subscribe({
          next: (output) => subscriber.next(output),
          error: (error: unknown) => subscriber.error(error),
          complete: () => {
            answered = true;
            outer?.removeEventListener('abort', onAbort);
            subscriber.complete();
          },
        });
        return () => {
          outer?.removeEventListener('abort', onAbort);
          if (!answered) cancel.abort(new Error('unsubscribed'));
        };
      });
    },
    async listen(port = config.server.port, host = config.server.host) {
      const server = createServer({ keepAliveTimeout: 65_000 }, gateway.listener);
      server.on('upgrade', gateway.upgrade);
      servers.add(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => { server.off('error', reject); resolve(); });
      });
      return server;
    },
    close() {
      closing ??= (async () => {
        await Promise.allSettled(transports.map((t) => t.close?.()));
        await Promise.allSettled([...servers].map((s) => new Promise<void>((resolve) => { s.close(() => resolve()); s.closeAllConnections(); })));
        for (const plugin of [...plugins].reverse()) {
          try { await plugin.stop?.(); } catch (error) { logger.error({ err: error, plugin: plugin.name }, 'plugin failed to stop'); }
        }
        await Promise.allSettled([deps.selector.stop?.()]);
        await Promise.allSettled(upstreams.map((u) => u.close()));
        await embedded.stop();
      })();
      return closing;
    },
  };

  const mount = transportHandlers(transports, gateway, logger);
  const root = mount();
  try {
    for (const plugin of plugins) await plugin.start?.(gateway);
  } catch (error) {
    await gateway.close();
    throw error;
  }
  return gateway;
}

function jsonRpcNotFound(network: string): Observable<JsonRpcOutput> {
  const body = encodeError(null, { code: Errors.NOT_FOUND.code, message: `unknown network "${network}"` });
  return of({ status: Errors.NOT_FOUND.httpStatus, headers: {}, body, contexts: [] });
}
