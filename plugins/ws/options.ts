import { validateSettings, type SettingsSchema } from '../../core/plugin-api.js';
import type { SubscriptionOptions } from './subscriptions/settings.js';

/** The plugin's name, and its section in the config: `plugins.ws`. */
export const WS_PLUGIN = 'ws';

/** The transport's name, as calls' contexts carry it (`RequestContext.transport`). */
export const WS_TRANSPORT = 'ws';

/** Options of the WebSocket transport. */
export interface WsTransportOptions {
  /** Subscriptions (`eth_subscribe`): caps, slow-reader bound, credits per plan, upstream sockets. */
  readonly subscriptions?: SubscriptionOptions;
  /** Path after a network's base that carries the key: `<prefix>/<API_KEY>`. Default `/ws/v3`. */
  readonly pathPrefix?: string;
  /** Largest accepted message, in bytes; a larger one closes the connection with 1009. Default: the config's `server.maxBodyBytes`. */
  readonly maxMessageBytes?: number;
  /** Calls one connection may have in flight (a batch counts as its calls); further messages wait, and reading pauses, until one completes. Default 64. */
  readonly maxInFlight?: number;
  /** Bytes queued for a slow reader above which reading from it pauses until it catches up. Default 4 MiB. */
  readonly maxBufferedBytes?: number;
  /** Connections one key may have open at once (on this gateway instance); one more is refused with HTTP 429 before the upgrade. Default 32. */
  readonly maxConnectionsPerKey?: number;
  /** Interval of keep-alive pings; a peer that has not answered the previous ping is dropped. Default 30 s. */
  readonly pingIntervalMs?: number;
  /** How long shutdown waits for calls in flight before closing connections. Default 5 s. */
  readonly drainTimeoutMs?: number;
  /**
   * WebSockets per upstream (one that gives a `wsUrl`) over which clients' calls travel, multiplexed;
   * 0 sends them over HTTP. Also settable in the config as `plugins.ws.upstreamConnections`, which wins.
   * Default 2.
   */
  readonly upstreamConnections?: number;
}

/** The settings the config may give under `plugins.ws`, checked by `resolveUpstreamConnections`. */
export const WS_CONFIG_SCHEMA: SettingsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    upstreamConnections: { type: 'integer', minimum: 0, maximum: 64, default: 2 },
  },
};

/**
 * The number of upstream WebSockets per upstream for clients' calls: the config's
 * `plugins.ws.upstreamConnections`, else the plugin's option, else 2.
 *
 * @throws ConfigError naming the field when it is not an integer from 0 to 64.
 */
export function resolveUpstreamConnections(options: WsTransportOptions, section: Readonly<Record<string, unknown>> | undefined): number {
  const { upstreamConnections } = validateSettings<{ upstreamConnections: number }>(WS_CONFIG_SCHEMA, [{ upstreamConnections: options.upstreamConnections }, section], `plugins.${WS_PLUGIN}`);
  return upstreamConnections;
}

/** Close codes the transport uses (4000–4999 is the application range of RFC 6455). */
export const WsCloseCodes = Object.freeze({
  /** The gateway is shutting down (RFC 6455 "going away"). */
  GOING_AWAY: 1001,
  /** A message exceeded the size limit (RFC 6455 "message too big"). */
  MESSAGE_TOO_BIG: 1009,
  /** The key's daily credit balance is used up; reconnect after it resets (mirrors HTTP 402). */
  CREDITS_EXHAUSTED: 4402,
  /** The key was refused after the connection opened (revoked; mirrors HTTP 401). */
  UNAUTHORIZED: 4401,
  /** The client read its subscriptions' notifications too slowly: more than `subscriptions.maxQueuedBytes` waited. */
  SLOW_CONSUMER: 4408,
  /** `subscriptions.maxRefusedInRow` subscribes in a row were refused (a client resubscribing in a loop). */
  REFUSED_IN_ROW: 4429,
});

/** Options with defaults applied. */
export interface WsSettings {
  /** See {@link WsTransportOptions.pathPrefix}. */
  readonly pathPrefix: string;
  /** See {@link WsTransportOptions.maxMessageBytes}. */
  readonly maxMessageBytes: number | undefined;
  /** See {@link WsTransportOptions.maxInFlight}. */
  readonly maxInFlight: number;
  /** See {@link WsTransportOptions.maxBufferedBytes}. */
  readonly maxBufferedBytes: number;
  /** See {@link WsTransportOptions.maxConnectionsPerKey}. */
  readonly maxConnectionsPerKey: number;
  /** See {@link WsTransportOptions.pingIntervalMs}. */
  readonly pingIntervalMs: number;
  /** See {@link WsTransportOptions.drainTimeoutMs}. */
  readonly drainTimeoutMs: number;
}

/** Applies the defaults. */
export function resolveWsSettings(options: WsTransportOptions): WsSettings {
  return {
    pathPrefix: options.pathPrefix ?? '/ws/v3',
    maxMessageBytes: options.maxMessageBytes,
    maxInFlight: options.maxInFlight ?? 64,
    maxBufferedBytes: options.maxBufferedBytes ?? 4 * 1024 * 1024,
    maxConnectionsPerKey: options.maxConnectionsPerKey ?? 32,
    pingIntervalMs: options.pingIntervalMs ?? 30_000,
    drainTimeoutMs: options.drainTimeoutMs ?? 5_000,
  };
}
