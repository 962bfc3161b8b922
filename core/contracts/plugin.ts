import type { DependencyContainer, InjectionToken } from 'tsyringe';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { GatewayConfig, NetworkConfig } from '../config/types.js';
import type { NetworkFamily } from './request-context.js';
import type { StageDefinition } from './stage.js';
import type { KeyStore } from './keys.js';
import type { CreditLedger } from './credit-ledger.js';
import type { RateLimiter } from './rate-limiter.js';
import type { Clock } from '../util/clock.js';
import type { UpstreamSelector } from './selector.js';
import type { SharedHeads } from './shared-heads.js';
import type { UpstreamBudgets } from './upstream-budgets.js';
import type { DedupMarks } from './dedup-marks.js';
import type { GatewayRuntime } from './runtime.js';
import type { CallObserver, UsageRecorder } from './usage.js';
import type { FilterStore } from './filter-store.js';
import type { PinStore } from './pin-store.js';

/**
 * A Tollgate plugin: registers providers (families, transports, stages, stores, embedded upstreams) into
 * the gateway's container. Bundled plugins and an integrator's own use this same contract.
 *
 * @example
 * ```ts
 * const myFamily: TollgatePlugin = {
 *   name: 'my-chain',
 *   register(container) {
 *     container.register(Tokens.Family, { useValue: { name: 'my-chain', methods: [...] } });
 *   },
 * };
 * ```
 */
export interface TollgatePlugin {
  /** Unique plugin name; also the key of its settings under `plugins` in the config. */
  readonly name: string;
  /** Names of plugins that must be registered before this one. */
  readonly dependsOn?: readonly string[];
  /**
   * Registers the plugin's providers and checks its settings: bindings only, no I/O (open nothing here).
   * Called once, in plugin order, before anything starts. A provider that needs what `start` opens is
   * registered with `useFactory`: the gateway resolves its services after every plugin started.
   */
  register(container: DependencyContainer, config: GatewayConfig): void;
  /**
   * Opens what the plugin needs (files, sockets, processes). Called once, in plugin order, before the
   * networks are built and before the gateway serves: use `gateway`'s config, container and logger here;
   * its networks and pipeline are there once `createGateway` resolves. When a later step fails to start,
   * `stop` is called for every plugin whose `start` succeeded, in reverse order.
   */
  start?(gateway: GatewayRuntime): Promise<void>;
  /** Releases what `start` opened. Called on shutdown (or a failed startup), in reverse plugin order. */
  stop?(): Promise<void>;
}

/**
 * A transport: turns bytes from clients into calls on the pipeline and answers back. The gateway's Node
 * listener offers each request to the transports in order until one claims it.
 */
export interface Transport {
  /** Transport name (`http`, `ws`...), recorded on every context it creates. */
  readonly name: string;
  /**
   * True for a transport of operator routes (an admin API, a dashboard, metrics): when the config sets
   * `server.adminListen`, it is offered requests of that listener only, and the public port answers its
   * paths 404 like any unknown path. Absent or false: the transport serves clients, on the public port.
   */
  readonly operator?: boolean;
  /** Handles an HTTP request if it is this transport's; returns false to let the next one try. */
  handleRequest?(req: IncomingMessage, res: ServerResponse, gateway: GatewayRuntime): boolean;
  /** Handles an HTTP upgrade if it is this transport's; returns false to let the next one try. */
  handleUpgrade?(req: IncomingMessage, socket: Duplex, head: Buffer, gateway: GatewayRuntime): boolean;
  /** Stops taking new work and finishes what is in flight. */
  close?(): Promise<void>;
}

/** A started embedded upstream: where it listens, and how to stop it. */
export interface EmbeddedUpstreamInstance {
  /** The HTTP URL it answers on. */
  readonly url: string;
  /** Its WebSocket URL, when it serves subscriptions. */
  readonly wsUrl?: string;
  /** Stops it and frees its resources. */
  stop(): Promise<void>;
}

/**
 * Starts upstream nodes inside the gateway's lifetime (an in-process or child-process node), referenced
 * from the config as `embedded: "<kind>"` or `"<kind>#<instance>"`.
 */
export interface EmbeddedUpstreamProvider {
  /** The kind named in the config. */
  readonly kind: string;
  /** Starts one instance for `network`. Instances with the same name are shared between networks. */
  start(instance: string, network: NetworkConfig): Promise<EmbeddedUpstreamInstance>;
}

/** The injection tokens of the core. Multi-providers (families, transports, stages...) are resolved with `resolveAll`. */
export const Tokens = Object.freeze({
  /** Multi: every {@link NetworkFamily}. */
  Family: Symbol.for('tollgate.Family') as InjectionToken<NetworkFamily>,
  /** Multi: every {@link Transport}, in registration order. */
  Transport: Symbol.for('tollgate.Transport') as InjectionToken<Transport>,
  /** Multi: extra pipeline stages ({@link StageDefinition}). */
  Stage: Symbol.for('tollgate.Stage') as InjectionToken<StageDefinition>,
  /** Multi: every {@link EmbeddedUpstreamProvider}. */
  EmbeddedUpstream: Symbol.for('tollgate.EmbeddedUpstream') as InjectionToken<EmbeddedUpstreamProvider>,
  /** The {@link KeyStore} (default: the keys of the config). */
  KeyStore: Symbol.for('tollgate.KeyStore') as InjectionToken<KeyStore>,
  /** The {@link CreditLedger} (default: in memory). */
  CreditLedger: Symbol.for('tollgate.CreditLedger') as InjectionToken<CreditLedger>,
  /** The {@link RateLimiter} (default: in memory). */
  RateLimiter: Symbol.for('tollgate.RateLimiter') as InjectionToken<RateLimiter>,
  /** The {@link UpstreamSelector} used by the route stage. */
  UpstreamSelector: Symbol.for('tollgate.UpstreamSelector') as InjectionToken<UpstreamSelector>,
  /** The {@link SharedHeads} of the deployment (default: within the process; a store plugin shares them across instances). */
  SharedHeads: Symbol.for('tollgate.SharedHeads') as InjectionToken<SharedHeads>,
  /** The {@link UpstreamBudgets} of the deployment (default: within the process; a store plugin shares them). */
  UpstreamBudgets: Symbol.for('tollgate.UpstreamBudgets') as InjectionToken<UpstreamBudgets>,
  /** Multi: every {@link CallObserver} (metrics, access logs). */
  CallObserver: Symbol.for('tollgate.CallObserver') as InjectionToken<CallObserver>,
  /** The {@link FilterStore} of the filters the gateway serves itself (default: in memory). */
  FilterStore: Symbol.for('tollgate.FilterStore') as InjectionToken<FilterStore>,
  /** The {@link PinStore} of the content each key pinned, and its stored bytes (default: in memory). */
  PinStore: Symbol.for('tollgate.PinStore') as InjectionToken<PinStore>,
  /** The {@link DedupMarks} of calls charged once within a window (default: within the process; a store plugin shares them). */
  DedupMarks: Symbol.for('tollgate.DedupMarks') as InjectionToken<DedupMarks>,
  /** The {@link UsageRecorder} (default: in memory). */
  UsageRecorder: Symbol.for('tollgate.UsageRecorder') as InjectionToken<UsageRecorder>,
  /** The gateway's {@link Clock}. */
  Clock: Symbol.for('tollgate.Clock') as InjectionToken<Clock>,
  /** The pino {@link Logger}. */
  Logger: Symbol.for('tollgate.Logger') as InjectionToken<Logger>,
});
