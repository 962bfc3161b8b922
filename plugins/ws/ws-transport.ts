import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocketServer } from 'ws';
import { ws as wsPackage } from './peers.js';
import { Errors, GatewayError, Tokens } from '../../core/plugin-api.js';
import { apiKeyFromPath, clientAddress, type GatewayRuntime, type KeyAccess, type Transport } from '../../core/transport-api.js';
import { apiKeyHash, type KeyStore } from '../../core/store-api.js';
import { WsConnection } from './connection.js';
import { refuseUpgrade } from './refuse-upgrade.js';
import { WS_TRANSPORT, resolveWsSettings, type WsSettings, type WsTransportOptions } from './options.js';
import { SubscriptionService } from './subscriptions/subscription-service.js';
import { resolveSubscriptionSettings } from './subscriptions/settings.js';
import { UpstreamSocketPool } from './upstream/socket-pool.js';
import { WsUpstreamChannel } from './upstream/ws-channel.js';

/**
 * JSON-RPC over WebSocket at `{network base}/ws/v3/<API_KEY>`, on the same port as HTTP. The key is
 * checked before the upgrade (a bad key gets HTTP 401 and no WebSocket); each message then goes through
 * the same pipeline as an HTTP body. Its calls reach upstreams that give a `wsUrl` over the transport's
 * pool of upstream WebSockets (its {@link WsTransport.channel}), else over HTTP.
 */
export class WsTransport implements Transport {
  readonly name = WS_TRANSPORT;
  readonly #options: WsTransportOptions;
  #settings: WsSettings | undefined;
  #server: WebSocketServer | undefined;
  #timer: NodeJS.Timeout | undefined;
  readonly #connections = new Set<WsConnection>();
  /** Open (or opening) connections by key id. */
  readonly #perKey = new Map<string, number>();
  /** Open connections by the SHA-256 of their API key, as key changes name them. */
  readonly #byKeyHash = new Map<string, Set<WsConnection>>();
  #stopWatching: (() => void) | undefined;
  #closing = false;

  /** The shared subscription streams of this transport's connections. */
  readonly subscriptions: SubscriptionService;
  /** The upstream WebSockets, shared by clients' calls and subscription streams. */
  readonly upstreamSockets: UpstreamSocketPool;
  /** The road this transport's calls take to upstreams (set on every connection's calls). */
  readonly channel: WsUpstreamChannel;

  /** @param upstreamConnections Upstream WebSockets per upstream for calls (see {@link WsTransportOptions.upstreamConnections}); default: the option's, else 2. */
  constructor(options: WsTransportOptions = {}, upstreamConnections = options.upstreamConnections ?? 2) {
    this.#options = options;
    const subscriptions = resolveSubscriptionSettings(options.subscriptions);
    this.upstreamSockets = new UpstreamSocketPool({ connections: upstreamConnections, pingMs: subscriptions.upstreamPingMs, timeoutMs: subscriptions.upstreamTimeoutMs });
    this.channel = new WsUpstreamChannel(this.upstreamSockets);
    this.subscriptions = new SubscriptionService(subscriptions, this.upstreamSockets);
  }

  /** Open connections. */
  get connections(): number {
    return this.#connections.size;
  }

  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, gateway: GatewayRuntime): boolean {
    const settings = (this.#settings ??= resolveWsSettings(this.#options));
    const addressed = gateway.networks.resolve(req.headers.host, req.url ?? '/');
    if (addressed === undefined) return false;
    const apiKey = apiKeyFromPath(addressed.rest, settings.pathPrefix);
    if (apiKey === undefined) return false;
    socket.on('error', () => socket.destroy());
    if (this.#closing) {
      refuseUpgrade(socket, new GatewayError(Errors.UPSTREAM_UNAVAILABLE, { message: 'the gateway is shutting down' }));
      return true;
    }
    // The authenticate stage's own check (key, revocation, plan), before any message.
    new Promise<KeyAccess>((resolve) => resolve(gateway.checkKey({ apiKey, keyHint: 'the URL: /ws/v3/<API_KEY>' }))).then(
      ({ key: record }) => {
        const open = this.#perKey.get(record.id) ?? 0;
        if (open >= settings.maxConnectionsPerKey) {
          refuseUpgrade(socket, new GatewayError(Errors.RATE_LIMITED, {
            message: `at most ${settings.maxConnectionsPerKey} WebSocket connections per key`,
            data: { maxConnections: settings.maxConnectionsPerKey },
            headers: { 'retry-after': '1' },
          }));
          return;
        }
        this.#perKey.set(record.id, open + 1);
        // The raw socket closes whatever happens to the upgrade, so the count never leaks.
        socket.once('close', () => {
          const left = (this.#perKey.get(record.id) ?? 1) - 1;
          if (left <= 0) this.#perKey.delete(record.id);
          else this.#perKey.set(record.id, left);
        });
        this.#accept(req, socket, head, gateway, settings, addressed.network, apiKey);
      },
      (error: unknown) => {
        if (error instanceof GatewayError && error.code === Errors.UNAUTHORIZED.code) {
          refuseUpgrade(socket, error);
          return;
        }
        gateway.logger.error({ err: error }, 'key lookup failed during a WebSocket upgrade');
        refuseUpgrade(socket, new GatewayError(Errors.INTERNAL_ERROR));
      },
    );
    return true;
  }

  async close(): Promise<void> {
    this.#closing = true;
    clearInterval(this.#timer);
    this.#stopWatching?.();
    const drain = this.#settings?.drainTimeoutMs ?? 5_000;
    await Promise.all([...this.#connections].map((c) => c.shutdown(drain)));
    this.subscriptions.close();
    this.upstreamSockets.close();
    await new Promise<void>((resolve) => (this.#server === undefined ? resolve() : this.#server.close(() => resolve())));
  }

  #accept(req: IncomingMessage, socket: Duplex, head: Buffer, gateway: GatewayRuntime, settings: WsSettings, network: GatewayRuntime['networks']['all'][number], apiKey: string): void {
    if (this.#server === undefined) {
      this.#server = new wsPackage.WebSocketServer({ noServer: true, maxPayload: settings.maxMessageBytes ?? gateway.config.server.maxBodyBytes, clientTracking: false });
      this.#timer = setInterval(() => { for (const c of this.#connections) c.heartbeat(); }, settings.pingIntervalMs);
      this.#timer.unref();
      // A key revoked, rotated or moved to another plan reaches its open connections, wherever the change was made.
      const keys = gateway.container.resolve<KeyStore>(Tokens.KeyStore);
      this.#stopWatching = keys.watch?.((hashes) => this.#keysChanged(hashes));
    }
    this.#server.handleUpgrade(req, socket, head, (ws) => {
      const connection = new WsConnection(ws, gateway, network, { apiKey }, {
        origin: req.headers.origin,
        userAgent: req.headers['user-agent'],
        remoteAddress: clientAddress(req, gateway.config.server.trustedProxies),
        headers: req.headers,
      }, settings, this.subscriptions, this.channel, socket);
      this.#connections.add(connection);
      const hash = apiKeyHash(apiKey);
      let same = this.#byKeyHash.get(hash);
      if (same === undefined) this.#byKeyHash.set(hash, (same = new Set()));
      same.add(connection);
      ws.once('close', () => {
        this.#connections.delete(connection);
        same.delete(connection);
        if (same.size === 0 && this.#byKeyHash.get(hash) === same) this.#byKeyHash.delete(hash);
      });
    });
  }

  /** Has the connections of the changed keys (all of them when unknown) look their key up again. */
  #keysChanged(hashes: readonly string[] | undefined): void {
    const affected = hashes === undefined ? [...this.#connections] : hashes.flatMap((hash) => [...(this.#byKeyHash.get(hash) ?? [])]);
    for (const connection of affected) connection.keyChanged();
  }
}
