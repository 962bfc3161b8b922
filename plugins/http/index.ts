/**
 * The HTTP JSON-RPC transport plugin: `POST {network base}/v3/<API_KEY>`.
 *
 * @packageDocumentation
 */
import { Tokens, type TollgatePlugin } from '../../core/plugin-api.js';
import { HttpTransport, type HttpTransportOptions } from './http-transport.js';

export { HttpTransport, type HttpTransportOptions } from './http-transport.js';
export { BodyTooLargeError } from './read-body.js';

/**
 * The HTTP JSON-RPC transport as a plugin.
 *
 * @example
 * ```ts
 * const gateway = await createGateway({ config, plugins: [httpTransport(), evmFamily()] });
 * ```
 */
export function httpTransport(options: HttpTransportOptions = {}): TollgatePlugin {
  return {
    name: 'http',
    register(container) {
      container.register(Tokens.Transport, { useValue: new HttpTransport(options) });
    },
  };
}
