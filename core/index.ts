/**
 * Tollgate's public API: the core of a metered node-access gateway. This entry is for
 * embedders: `createGateway`, what it takes and returns, the config types and the errors. Plugin authors
 * import `tollgate/plugin`; family, store, transport and upstream authors `tollgate/family`,
 * `tollgate/store`, `tollgate/transport` and `tollgate/upstream`.
 *
 * @example
 * ```ts
 * import { createGateway } from 'tollgate';
 * import { httpTransport } from 'tollgate/plugins/http';
 * import { wsTransport } from 'tollgate/plugins/ws';
 * import { evmFamily } from 'tollgate/plugins/evm';
 *
 * const gateway = await createGateway({
 *   config: {
 *     keys: [{ key: 'my-api-key-123', plan: 'growth' }],
 *     networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: 'http://127.0.0.1:8545' }] }],
 *   },
 *   plugins: [httpTransport(), wsTransport(), evmFamily()],
 * });
 * await gateway.listen(8080); // POST http://127.0.0.1:8080/eth/v3/my-api-key-123, ws://.../eth/ws/v3/my-api-key-123
 * // or in a server of your own: server.on('request', gateway.listener); server.on('upgrade', gateway.upgrade)
 * // or without a transport: gateway.handle({ network: 'eth', apiKey, body }).subscribe(...)
 * ```
 *
 * @packageDocumentation
 */
import 'reflect-metadata';

export { createGateway, type Gateway, type GatewayOptions, type HandleRequest, PluginError, type PluginErrorCode, type PluginErrorOptions, checkGateway } from './gateway/create-gateway.js';
export type { MountOptions, MountedGateway, NextHandler } from './gateway/mount.js';
export { type JsonRpcInput, type JsonRpcOutput, SERVED_BY_HEADER } from './jsonrpc/json-rpc-engine.js';
export type { TollgatePlugin } from './contracts/plugin.js';
export { GatewayError, type GatewayErrorOptions } from './errors/gateway-error.js';
export { Errors, type ErrorEntry } from './errors/catalog.js';
export { ConfigError, resolveConfig, loadConfigFile } from './config/load-config.js';
export { MissingPeerError } from './plugin/optional-peer.js';
export { configSchema } from './config/schema.js';
export type { JsonRpcId, JsonRpcResponse } from './contracts/json-rpc.js';
export type { JsonRpcErrorObject } from './errors/json-rpc-error.js';
export type { PlanConfig, KeyConfig, NetworkBaseConfig, UpstreamConfig, NetworkConfig, BreakerConfig, ProbeConfig, FailoverConfig, NetworkFailoverConfig, ServerConfig, UpstreamDefaultsConfig, LogConfig, GatewayConfig, GatewayConfigInput, UnknownMethodsConfig } from './config/types.js';
