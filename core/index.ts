/**
 * Tollgate's public API: the core of a metered node-access gateway. Plugins (network families,
 * transports, stores, embedded upstreams) build on exactly these exports.
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
// tsyringe needs the Reflect metadata API before any of its code runs; loading it here spares every user the step.
import 'reflect-metadata';

export { container, injectable, inject, injectAll, singleton, type DependencyContainer, type InjectionToken } from 'tsyringe';
export { createGateway, keyIdOf, PluginError, type Gateway, type GatewayOptions, type HandleRequest } from './gateway.js';
export { type MountOptions, type MountedGateway, type NextHandler } from './mount.js';
export { InFlightResponses } from './in-flight.js';
export type { GatewayRuntime, ContextInit } from './runtime.js';
export { CallContext, NEVER_ABORTED } from './call-context.js';
export { Tokens, type TollgatePlugin, type Transport, type EmbeddedUpstreamProvider, type EmbeddedUpstreamInstance } from './plugin.js';
export { ContextKey, ContextState, type RequestContext, type Call, type Credentials, type RequestMeta, type UpstreamReply, type Compensation } from './context.js';
export type { MethodDefinition, NetworkFamily, HealthProbe, JsonSchema, LimitsInput, MaybePromise } from './family.js';
export type { CallProtocol } from './protocol.js';
export { Network, type NetworkMethod, type NetworkRuntime } from './network.js';
export { NetworkDirectory, type AddressedNetwork } from './network-directory.js';
export { apiKeyFromPath } from './key-path.js';
export { GatewayError, toGatewayError, type GatewayErrorOptions } from './errors/gateway-error.js';
export { Errors, type ErrorEntry, type ErrorName } from './errors/catalog.js';
export { step, stepFunctionOf, isPromise, CORE_STAGES, type Stage, type StageDefinition, type StageDependencies, type CoreStageName, type StepFunction } from './pipeline/stage.js';
export { buildPipeline, orderStages } from './pipeline/pipeline.js';
export { createJsonRpcEngine, SERVED_BY_HEADER, type JsonRpcInput, type JsonRpcOutput, type JsonRpcEngineDeps } from './jsonrpc/engine.js';
export { jsonRpcProtocol, isCapacityError, capacityErrorOf, type CapacityError } from './jsonrpc/protocol.js';
export { encodeRequest, encodeError } from './jsonrpc/encode.js';
export type { JsonRpcId, JsonRpcRequest, JsonRpcResponse, JsonRpcSuccess, JsonRpcFailure, JsonRpcErrorObject } from './jsonrpc/types.js';
export { Upstream, type UpstreamRequest, type UpstreamSettings } from './upstream/upstream.js';
export { UpstreamFailure, classifyTransportError, type FailureKind } from './upstream/upstream-failure.js';
export { RotatingSelector, type UpstreamSelector, type UpstreamStatus } from './upstream/selector.js';
export { FailoverSelector, type FailoverSelectorOptions } from './upstream/failover-selector.js';
export { NetworkHealth } from './upstream/network-health.js';
export { UpstreamHealth, type UpstreamCounters, type LastFailure } from './upstream/upstream-health.js';
export { CircuitBreaker, type BreakerState, type CircuitBreakerSettings, type BreakerTransitions } from './upstream/circuit-breaker.js';
export { resolveFailoverSettings, failoverEligible, type FailoverSettings, type ProbeSettings } from './upstream/failover-settings.js';
export { networkUnavailable } from './upstream/unavailable.js';
export type { KeyStore, ApiKeyRecord, Plan } from './metering/keys.js';
export { StaticKeyStore } from './metering/config-key-store.js';
export { KeyRegistryToken, LayeredKeyStore, apiKeyHash, recordOf, type KeyRegistry, type StoredKey, type KeyChanges } from './metering/key-registry.js';
export { hashSecret, hashSecretSync, verifySecret, isSecretHash, SECRET_HASH_PREFIX } from './metering/secret-hash.js';
export { utcDay, nextUtcMidnight, UtcDayCache, type CreditLedger, type DebitReceipt, type DebitResult, type DebitTaken, type DebitRefused, type Balance } from './metering/credit-ledger.js';
export { MemoryCreditLedger } from './metering/memory-credit-ledger.js';
export { MemoryRateLimiter, type RateLimiter, type RateDecision, type RateAllowed, type RateRefused } from './metering/rate-limiter.js';
export { systemClock, type Clock } from './clock.js';
export { MemoryUsageRecorder, usageOf, type CallObserver, type UsageEvent, type UsageRecorder, type UsageTotals } from './observe.js';
export { compileParams, type ParamsValidator } from './validation/compile-params.js';
export { configSchema } from './config/schema.js';
export { defaultPlans } from './config/default-plans.js';
export { resolveConfig, loadConfigFile, ConfigError } from './config/load-config.js';
export type * from './config/types.js';
