import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { Errors, GatewayError, Tokens, apiKeyFromPath, type GatewayRuntime, type KeyStore, type Transport } from '../../core/index.js';
import { WsConnection } from './connection.js';
import { refuseUpgrade } from './refuse-upgrade.js';
import { resolveWsSettings, type WsSettings, type WsTransportOptions } from './options.js';

/**
 * JSON-RPC over WebSocket at `{network base}/ws/v3/<API_KEY>`, on the same port as HTTP. The key is
 * checked before the upgrade (a bad key gets HTTP 401 and no WebSocket); each message then goes through
 * the same pipeline as an HTTP body.
 */
export class WsTransport implements Transport {
  readonly name = 'ws';
  readonly #options: WsTransportOptions;
  #settings: WsSettings | undefined;
  #server: WebSocketServer | undefined;
  #timer: NodeJS.Timeout | undefined;
  readonly #connections = new Set<WsConnection>();
  #closing = false;

  constructor(options: WsTransportOptions = {}) {
    this.#options = options;
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
    const keys = gateway.container.resolve<KeyStore>(Tokens.KeyStore);
    Promise.resolve(apiKey === '' ? undefined : keys.find(apiKey)).then(
      (record) => {
        if (record === undefined || record.revoked === true) {
          refuseUpgrade(socket, new GatewayError(Errors.UNAUTHORIZED, apiKey === '' ? { message: 'API key required in the URL: /ws/v3/<API_KEY>' } : {}));
          return;
        }
        this.#accept(req, socket, head, gateway, settings, addressed.network, apiKey);
      },
      (error: unknown) => {
        gateway.logger.error({ err: error }, 'key lookup failed during a WebSocket upgrade');
        refuseUpgrade(socket, new GatewayError(Errors.INTERNAL_ERROR));
      },
    );
    return true;
  }

  async close(): Promise<void> {
    this.#closing = true;
    clearInterval(this.#timer);
    const drain = this.#settings?.drainTimeoutMs ?? 5_000;
    await Promise.all([...this.#connections].map((c) => c.shutdown(drain)));
    await new Promise<void>((resolve) => (this.#server === undefined ? resolve() : this.#server.close(() => resolve())));
  }

  #accept(req: IncomingMessage, socket: Duplex, head: Buffer, gateway: GatewayRuntime, settings: WsSettings, network: GatewayRuntime['networks']['all'][number], apiKey: string): void {
    if (this.#server === undefined) {
      this.#server = new WebSocketServer({ noServer: true, maxPayload: settings.maxMessageBytes ?? gateway.config.server.maxBodyBytes, clientTracking: false });
      this.#timer = setInterval(() => { for (const c of this.#connections) c.heartbeat(); }, settings.pingIntervalMs);
      this.#timer.unref();
    }
    this.#server.handleUpgrade(req, socket, head, (ws) => {
      const connection = new WsConnection(ws, gateway, network, { apiKey }, {
        origin: req.headers.origin,
        userAgent: req.headers['user-agent'],
        remoteAddress: req.socket.remoteAddress,
        headers: req.headers,
      }, settings);
      this.#connections.add(connection);
      ws.once('close', () => this.#connections.delete(connection));
    });
  }
}
