import { type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { type Logger } from 'pino';
import { type Observable } from 'rxjs';
import type { GatewayConfig, GatewayConfigInput } from '../config/types.js';
import type { TollgatePlugin } from '../contracts/plugin.js';
import type { Clock } from '../util/clock.js';
import type { GatewayRuntime } from '../contracts/runtime.js';
import type { JsonRpcOutput } from '../jsonrpc/json-rpc-engine.js';
import type { MountedGateway, MountOptions } from './mount.js';

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
