/**
 * The WebSocket JSON-RPC transport plugin: `{network base}/ws/v3/<API_KEY>`.
 *
 * @packageDocumentation
 */
import { Tokens, type TollgatePlugin } from '../../core/plugin-api.js';
import { WsTransport } from './ws-transport.js';
import { subscriptionStages } from './subscriptions/subscription-stages.js';
import { WS_PLUGIN, resolveUpstreamConnections, type WsTransportOptions } from './options.js';

export { WsTransport } from './ws-transport.js';
export { WsConnection } from './connection.js';
export type { ClientSocket, ClientMessage } from './client-socket.js';
export { WsCloseCodes, WS_PLUGIN, type WsTransportOptions, type WsSettings } from './options.js';
export { SubscriptionService } from './subscriptions/subscription-service.js';
export { SubscriptionSession, ClientSubscription, SUBSCRIPTION_SESSION, SubscriptionCloseCodes, type CloseConnection, type CorkConnection } from './subscriptions/subscription-session.js';
export { StreamHub, type HubMember, type HubDeps } from './subscriptions/stream-hub.js';
export { UpstreamSocket, UpstreamCallError, type UpstreamEventHandler } from './upstream/upstream-socket.js';
export { UpstreamSocketPool, type SocketPoolSettings } from './upstream/socket-pool.js';
export { WsUpstreamChannel } from './upstream/ws-channel.js';
export { type SubscriptionOptions, type SubscriptionSettings, type SubscriptionCredits } from './subscriptions/settings.js';

/**
 * The WebSocket transport as a plugin. Mount the gateway's `upgrade` handler on your server (the
 * bundled gateway and `gateway.listen()` do).
 *
 * @example
 * ```ts
 * const gateway = await createGateway({ config, plugins: [httpTransport(), wsTransport(), evmFamily()] });
 * server.on('upgrade', gateway.upgrade);
 * ```
 */
export function wsTransport(options: WsTransportOptions = {}): TollgatePlugin {
  return {
    name: WS_PLUGIN,
    register(container, config) {
      const transport = new WsTransport(options, resolveUpstreamConnections(options, config.plugins[WS_PLUGIN]));
      container.register(Tokens.Transport, { useValue: transport });
      for (const stage of subscriptionStages(transport.subscriptions)) container.register(Tokens.Stage, { useValue: stage });
    },
  };
}
