import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createHash } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { container as rootContainer, type DependencyContainer, type InjectionToken } from 'tsyringe';
import { pino, type Logger } from 'pino';
import { of, type Observable } from 'rxjs';
import type { GatewayConfig, GatewayConfigInput, NetworkConfig, UpstreamConfig } from './config/types.js';
import { resolveConfig } from './config/load-config.js';
import type { RequestContext } from './context.js';
import { CallContext } from './call-context.js';
import type { NetworkFamily } from './family.js';
import { Network } from './network.js';
import { NetworkDirectory } from './network-directory.js';
import { Tokens, type EmbeddedUpstreamInstance, type EmbeddedUpstreamProvider, type TollgatePlugin, type Transport } from './plugin.js';
import { systemClock, type Clock } from './clock.js';
import { StaticKeyStore } from './metering/config-key-store.js';
import { hashSecretSync } from './metering/secret-hash.js';
import { MemoryCreditLedger } from './metering/memory-credit-ledger.js';
import { MemoryRateLimiter } from './metering/rate-limiter.js';
import { FailoverSelector } from './upstream/failover-selector.js';
import { Upstream } from './upstream/upstream.js';
import { buildPipeline } from './pipeline/pipeline.js';
import type { StageDefinition, StageDependencies } from './pipeline/stage.js';
import { createJsonRpcEngine, type JsonRpcInput, type JsonRpcOutput } from './jsonrpc/engine.js';
import type { ContextInit, GatewayRuntime } from './runtime.js';
import { encodeError } from './jsonrpc/encode.js';
import { MemoryUsageRecorder, usageOf, type CallObserver, type UsageRecorder } from './observe.js';
import { Errors } from './errors/catalog.js';
import { normalizePrefix, urlUnderPrefix, type MountedGateway, type MountOptions } from './mount.js';

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
}

/** A plugin problem found while assembling the gateway. */
export class PluginError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PluginError';
  }
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
  const providers = new Map<string, EmbeddedUpstreamProvider>();
  for (const provider of resolveAllOptional(container, Tokens.EmbeddedUpstream)) providers.set(provider.kind, provider);

  const embedded = new Map<string, Promise<EmbeddedUpstreamInstance>>();
  const upstreams: Upstream[] = [];
  const stopEmbedded = async (): Promise<void> => {
    const started = await Promise.allSettled(embedded.values());
    await Promise.allSettled(started.map((s) => (s.status === 'fulfilled' ? s.value.stop() : undefined)));
  };

  const upstreamUrl = (network: NetworkConfig, upstream: UpstreamConfig, at: string): Promise<string> => {
    if (upstream.url !== undefined) return Promise.resolve(upstream.url);
    const [kind = '', instance = 'default'] = upstream.embedded!.split('#');
    const provider = providers.get(kind);
    if (provider === undefined) throw new PluginError(`${at}.embedded: no plugin provides embedded upstream "${kind}"`);
    const id = `${kind}#${instance}`;
    let started = embedded.get(id);
    if (started === undefined) {
      started = provider.start(instance, network);
      embedded.set(id, started);
    }
    return started.then((s) => s.url);
  };

  let networks: Network[];
  try {
    networks = await Promise.all(
      config.networks.map(async (networkConfig, n) => {
        const networkFamilies = networkConfig.families.map((name, f) => {
          const family = families.get(name);
          if (family === undefined) throw new PluginError(`networks[${n}].families[${f}]: no plugin provides network family "${name}"`);
          return family;
        });
        const networkUpstreams = await Promise.all(
          networkConfig.upstreams.map(async (u, i) => {
            const url = await upstreamUrl(networkConfig, u, `networks[${n}].upstreams[${i}]`);
            const upstream = new Upstream({
              name: u.name ?? `${networkConfig.name}-${u.role ?? 'primary'}-${i + 1}`,
              network: networkConfig.name,
              url,
              role: u.role ?? 'primary',
              headers: u.headers ?? {},
              timeoutMs: u.timeoutMs ?? config.upstreamDefaults.timeoutMs,
              connectTimeoutMs: config.upstreamDefaults.connectTimeoutMs,
              connections: u.connections ?? config.upstreamDefaults.connections,
              weight: u.weight ?? 1,
              keepAliveTimeoutMs: config.upstreamDefaults.keepAliveTimeoutMs,
            });
            upstreams.push(upstream);
            return upstream;
          }),
        );
        return new Network(networkConfig, networkFamilies, networkUpstreams);
      }),
    );
  } catch (error) {
    await Promise.allSettled(upstreams.map((u) => u.close()));
    await stopEmbedded();
    throw error;
  }
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
  const usage = container.resolve<UsageRecorder>(Tokens.UsageRecorder);
  const observers = resolveAllOptional<CallObserver>(container, Tokens.CallObserver);
  const finished = (ctx: RequestContext): void => {
    const event = usageOf(ctx, clock.now());
    if (event !== undefined) {
      try {
        const recorded = usage.record(event);
        if (recorded instanceof Promise) recorded.catch((error: unknown) => logger.error({ err: error }, 'usage recording failed'));
      } catch (error) {
        logger.error({ err: error }, 'usage recording failed');
      }
    }
    for (const observer of observers) {
      try {
        observer.callFinished(ctx);
      } catch (error) {
        logger.error({ err: error }, 'call observer failed');
      }
    }
  };
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

  // Offers a request to each transport in turn; true when one took it (or it failed after answering began).
  const offerRequest = (req: IncomingMessage, res: ServerResponse): boolean => {
    try {
      for (const transport of transports) if (transport.handleRequest?.(req, res, gateway) === true) return true;
      return false;
    } catch (error) {
      logger.error({ err: error }, 'transport failed');
      if (res.headersSent) res.destroy();
      else replyError(res, Errors.INTERNAL_ERROR.httpStatus, Errors.INTERNAL_ERROR.code, Errors.INTERNAL_ERROR.message);
      return true;
    }
  };
  const offerUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): boolean => {
    for (const transport of transports) if (transport.handleUpgrade?.(req, socket, head, gateway) === true) return true;
    return false;
  };
  const mountAt = (prefix: string): MountedGateway => ({
    listener(req, res, next) {
      const original = req.url ?? '/';
      const url = urlUnderPrefix(original, prefix);
      if (url !== undefined) {
        req.url = url;
        if (offerRequest(req, res)) return;
        req.url = original;
      }
      if (next !== undefined) next();
      else replyError(res, Errors.NOT_FOUND.httpStatus, Errors.NOT_FOUND.code, Errors.NOT_FOUND.message);
    },
    upgrade(req, socket, head) {
      const original = req.url ?? '/';
      const url = urlUnderPrefix(original, prefix);
      if (url === undefined) return false;
      req.url = url;
      if (offerUpgrade(req, socket, head)) return true;
      req.url = original;
      return false;
    },
  });
  const root: MountedGateway = {
    listener(req, res, next) {
      if (offerRequest(req, res)) return;
      if (next !== undefined) next();
      else replyError(res, Errors.NOT_FOUND.httpStatus, Errors.NOT_FOUND.code, Errors.NOT_FOUND.message);
    },
    upgrade: offerUpgrade,
  };

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
      const prefix = normalizePrefix(options.prefix);
      return prefix === '' ? root : mountAt(prefix);
    },
    handle(request) {
      const network = directory.get(request.network);
      if (network === undefined) return jsonRpcNotFound(request.network);
      const input: JsonRpcInput = { transport: request.transport ?? 'direct', network, credentials: { apiKey: request.apiKey }, body: request.body };
      return jsonRpc(input);
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
        await stopEmbedded();
      })();
      return closing;
    },
  };

  try {
    for (const plugin of plugins) await plugin.start?.(gateway);
  } catch (error) {
    await gateway.close();
    throw error;
  }
  return gateway;
}

function replyError(res: ServerResponse, status: number, code: number, message: string): void {
  const body = encodeError(null, { code, message });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function jsonRpcNotFound(network: string): Observable<JsonRpcOutput> {
  const body = encodeError(null, { code: Errors.NOT_FOUND.code, message: `unknown network "${network}"` });
  return of({ status: Errors.NOT_FOUND.httpStatus, headers: {}, body, contexts: [] });
}
