/**
 * The WebSocket JSON-RPC transport plugin: `{network base}/ws/v3/<API_KEY>`.
 *
 * @packageDocumentation
 */
import { Tokens, type TollgatePlugin } from '../../core/index.js';
import { WsTransport } from './ws-transport.js';
import type { WsTransportOptions } from './options.js';

export { WsTransport } from './ws-transport.js';
export { WsConnection } from './connection.js';
export { WsCloseCodes, resolveWsSettings, type WsTransportOptions, type WsSettings } from './options.js';
export { refuseUpgrade } from './refuse-upgrade.js';

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
    name: 'ws',
    register(container) {
      container.register(Tokens.Transport, { useValue: new WsTransport(options) });
    },
  };
}
