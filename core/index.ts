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

export { instanceCachingFactory, type DependencyContainer, type InjectionToken } from 'tsyringe';
export { createGateway, checkGateway, keyIdOf, PluginError, type PluginErrorCode, type PluginErrorOptions, type Gateway, type GatewayOptions, type HandleRequest } from './engine/gateway.js';
export { pinEmbeddedUpstreams, type PinnedUpstreams } from './engine/pin-embedded-upstreams.js';
export { type MountOptions, type MountedGateway, type NextHandler } from './leaves/mount.js';
export { InFlightResponses } from './leaves/in-flight.js';
export type { CancelSignal } from './leaves/cancel-signal.js';
export { continueBody, refuseBody } from './leaves/body-refusal.js';
export type { GatewayRuntime, ContextInit, KeyAccess, KeyCheck } from './model/runtime.js';
export { Tokens, type TollgatePlugin, type Transport, type EmbeddedUpstreamProvider, type EmbeddedUpstreamInstance } from './model/plugin.js';
export { keyOf, planOf, methodOf, replyOf, servedByOf } from './model/context-access.js';
export { ContextKey, ContextState, type RequestContext, type Call, type Credentials, type RequestMeta, type UpstreamReply, type Compensation } from './model/context.js';
export type { MethodDefinition, NetworkFamily, HealthProbe, JsonSchema, LimitsInput, MaybePromise, NodeErrorInput, NodeErrorSettlement } from './model/context.js';
export type { BatchCodec, CallBatch, CallProtocol, Network, NetworkMethod, NetworkRuntime, Upstream, UpstreamChannel, UpstreamRequest, UpstreamSettings } from './model/context.js';
export type { SubscriptionSupport, StreamRequest, StreamContinuity, StreamAsk } from './model/subscription.js';
export type { NetworkDirectory, AddressedNetwork } from './model/network-directory.js';
export { apiKeyFromPath } from './leaves/key-path.js';
export { GatewayError, toGatewayError, type GatewayErrorOptions } from './leaves/errors/gateway-error.js';
export { Errors, type ErrorEntry } from './leaves/errors/catalog.js';
export { step, isPromise, CORE_STAGES, type Stage, type StageDefinition, type StageDependencies, type StepFunction } from './model/stage.js';
export { orderStages } from './pipeline/pipeline.js';
export { createUpstreamSender, type UpstreamSender, type UpstreamAnswer, type UpstreamSenderOptions } from './pipeline/upstream-sender.js';
export { SERVED_BY_HEADER, type JsonRpcInput, type JsonRpcOutput } from './engine/json-rpc-engine.js';
export { encodeError } from './leaves/jsonrpc/encode.js';
export { NodeAnswerError } from './leaves/jsonrpc/node-answer-error.js';
export { objectMembers, arrayElements, memberRange, type JsonMember } from './leaves/jsonrpc/scan.js';
export type { JsonRpcId, JsonRpcResponse, JsonRpcSuccess, JsonRpcFailure, JsonRpcErrorObject } from './leaves/jsonrpc/types.js';
export { UpstreamFailure, type FailureKind } from './leaves/upstream-failure.js';
export type { UpstreamSelector, UpstreamStatus } from './model/selector.js';
export type { SharedHeads, HeadKey, HeadListener, AnswerHead } from './model/shared-heads.js';
export type { UpstreamBudgets, UpstreamBudget, BudgetTake } from './model/upstream-budgets.js';
export { networkUnavailable } from './implementations/upstream/unavailable.js';
export { probeUpstream, type ProbeOutcome, type ProbeOptions } from './implementations/upstream/probe.js';
export type { KeyStore, KeyChangeListener, ApiKeyRecord, Plan } from './model/keys.js';
export { KeySettingsSectionToken, type KeySettingsSection } from './model/key-settings.js';
export { KeyRegistryToken, LayeredKeyStore, apiKeyHash, recordOf, type KeyRegistry, type StoredKey, type KeyChanges } from './model/key-registry.js';
export { SecretVerifier, type SecretCheck } from './implementations/metering/secret-verifier.js';
export { hashSecret, verifySecret, decodeSecretHash, SECRET_SCRYPT_PARAMS, type DecodedSecretHash } from './leaves/secret-hash.js';
export { utcDay, nextUtcMidnight, UtcDayCache, type CreditLedger, type DebitReceipt, type DebitResult, type DebitTaken, type DebitRefused, type Balance } from './model/credit-ledger.js';
export { MemoryCreditLedger } from './implementations/metering/memory-credit-ledger.js';
export type { FilterStore, StoredFilter, FilterLimits } from './model/filter-store.js';
export { MemoryFilterStore, newFilterId } from './implementations/memory-filter-store.js';
export { newDebitId } from './implementations/metering/debit-id.js';
export { type EventMeter, type EventRefund, type EventCharge, type EventTaken, type MeteredEvent } from './implementations/metering/event-meter.js';
export { MemoryRateLimiter, type RateLimiter, type RateDecision, type RateAllowed, type RateRefused } from './model/rate-limiter.js';
export { systemClock, type Clock } from './leaves/clock.js';
export { importPeer, MissingPeerError } from './leaves/optional-peer.js';
export { AttemptObserverToken, type AttemptObserver, type AttemptEnd } from './model/attempt-observer.js';
export { MemoryUsageRecorder, usageOf, type CallObserver, type UsageEvent, type UsageRecorder, type UsageTotals } from './model/observe.js';
export { configSchema } from './leaves/config/schema.js';
export { resolveConfig, loadConfigFile, readConfigFile, ConfigError, type ConfigFileData } from './leaves/config/load-config.js';
export { interpolateEnv, type ConfigEnvironment, type Interpolated } from './leaves/config/interpolate-env.js';
export { validateSettings, validateSettingsLayers, settingsProblems, type SettingsSchema, type SettingsRefinement, type SettingsLayer } from './leaves/config/plugin-settings.js';
export type * from './leaves/config/types.js';
