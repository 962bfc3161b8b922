/**
 * For plugin authors: the contracts a plugin implements (network families and their methods, stages,
 * transports, embedded upstreams), the container tokens it registers under, the request context and its
 * helpers, settings validation and optional peers. Import it as `tollgate/plugin`; stores, transports and
 * upstream machinery have entries of their own (`tollgate/store`, `tollgate/transport`, `tollgate/upstream`).
 *
 * @packageDocumentation
 */
import 'reflect-metadata';

export type { DependencyContainer, InjectionToken } from 'tsyringe';
export { keyIdOf, PluginError, type PluginErrorCode } from './gateway/create-gateway.js';
export { pinEmbeddedUpstreams, type PinnedUpstreams } from './gateway/pin-embedded-upstreams.js';
export { Tokens, type TollgatePlugin, type EmbeddedUpstreamProvider, type EmbeddedUpstreamInstance } from './contracts/plugin.js';
export { keyOf, planOf, methodOf, replyOf, servedByOf } from './context/context-access.js';
export { ContextKey, ContextState } from './contracts/context-state.js';
export { type RequestContext, type Compensation, type MethodDefinition, type NetworkFamily, type HealthProbe, type LimitsInput, type NodeErrorInput, type NodeErrorSettlement, type BatchCodec, type CallBatch, type CallProtocol, type Network, type NetworkMethod, type NetworkRuntime } from './contracts/request-context.js';
export { type Call, type Credentials, type RequestMeta } from './contracts/call.js';
export { type UpstreamReply } from './contracts/upstream.js';
export { type JsonSchema, type MaybePromise } from './util/maybe-promise.js';
export type { SubscriptionSupport, SubscriptionMethod, SubscriptionIdFormat, StreamRequest, StreamContinuity, StreamAsk } from './contracts/subscription.js';
export type { NetworkDirectory, AddressedNetwork } from './contracts/network-directory.js';
export { GatewayError, toGatewayError } from './errors/gateway-error.js';
export { Errors, type ErrorEntry } from './errors/catalog.js';
export { step } from './pipeline/stage-runner.js';
export { isPromise } from './util/maybe-promise.js';
export { CORE_STAGES, type Stage, type StageDefinition, type StageDependencies, type StepFunction } from './contracts/stage.js';
export { orderStages } from './pipeline/pipeline.js';
export { settleCall, type CallSettlement } from './pipeline/settle.js';
export { NodeAnswerError } from './jsonrpc/node-answer-error.js';
export type { JsonRpcId, JsonRpcResponse, JsonRpcSuccess, JsonRpcFailure } from './contracts/json-rpc.js';
export type { JsonRpcErrorObject } from './errors/json-rpc-error.js';
export type { AnswerHead } from './contracts/shared-heads.js';
export type { UpstreamBudgets, UpstreamBudget, BudgetTake } from './contracts/upstream-budgets.js';
export type { KeyChangeListener } from './contracts/keys.js';
export type { PlanLookup } from './contracts/keys.js';
export { KeySettingsSectionToken, type KeySettingsSection } from './keys/key-settings.js';
export { decodeSecretHash, SECRET_SCRYPT_PARAMS, type DecodedSecretHash } from './keys/secret-hash.js';
export type { FilterStore, StoredFilter, FilterLimits } from './contracts/filter-store.js';
export { MemoryFilterStore, newFilterId } from './network/memory-filter-store.js';
export { pinIdOf, type PinStore, type PinRecord, type PinAddResult, type PinStatusName, type PinSettlement, type PinSettleResult } from './contracts/pin-store.js';
export type { DedupMarks } from './contracts/dedup-marks.js';
export { chargeOnceStage, type ChargeOnceOptions } from './pipeline/charge-once.js';
export { systemClock, type Clock } from './util/clock.js';
export { importPeer, MissingPeerError } from './plugin/optional-peer.js';
export { usageOf } from './usage/usage.js';
export { type CallObserver } from './contracts/usage.js';
export { readConfigFile, ConfigError, type ConfigFileData } from './config/load-config.js';
export { AddressRanges, addressRangeProblem } from './config/address-ranges.js';
export { interpolateEnv, type ConfigEnvironment, type Interpolated } from './config/interpolate-env.js';
export { validateSettings, validateSettingsLayers, settingsProblems, type SettingsSchema, type SettingsRefinement, type SettingsLayer } from './config/plugin-settings.js';
export { CachePoliciesToken, type CacheScope, type ChainHead, type FamilyCachePolicies, type MethodCachePolicy } from './network/cache-policy.js';
export type { UpstreamBudgetConfig, HedgeConfig, GatewayConfig } from './config/types.js';
