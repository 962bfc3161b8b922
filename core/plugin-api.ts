/**
 * For every plugin author: the plugin contract and the container tokens it registers under, the request
 * context and its helpers, stages, call observers, errors, settings validation and optional peers. Import it
 * as `tollgate/plugin`; network families, stores, transports and upstream machinery have entries of their
 * own (`tollgate/family`, `tollgate/store`, `tollgate/transport`, `tollgate/upstream`).
 *
 * @packageDocumentation
 */
import 'reflect-metadata';

export type { DependencyContainer, InjectionToken } from 'tsyringe';
export { keyIdOf, PluginError } from './gateway/create-gateway.js';
export { Tokens, type TollgatePlugin } from './contracts/plugin.js';
export { keyOf, planOf, methodOf, replyOf, servedByOf } from './context/context-access.js';
export { ContextKey, ContextState } from './contracts/context-state.js';
export { type RequestContext, type Compensation, type Network } from './contracts/request-context.js';
export { type Call, type Credentials, type RequestMeta } from './contracts/call.js';
export { type UpstreamReply } from './contracts/upstream.js';
export { type JsonSchema, type MaybePromise } from './util/maybe-promise.js';
export { GatewayError, toGatewayError } from './errors/gateway-error.js';
export { Errors, type ErrorEntry } from './errors/catalog.js';
export { step } from './pipeline/stage-runner.js';
export { isPromise } from './util/maybe-promise.js';
export { CORE_STAGES, type Stage, type StageDefinition, type StageDependencies, type StepFunction } from './contracts/stage.js';
export { orderStages } from './pipeline/pipeline.js';
export { settleCall, type CallSettlement } from './pipeline/settle.js';
export type { JsonRpcId } from './contracts/json-rpc.js';
export type { PlanLookup } from './contracts/keys.js';
export { KeySettingsSectionToken, type KeySettingsSection } from './keys/key-settings.js';
export { systemClock, type Clock } from './util/clock.js';
export { importPeer, MissingPeerError } from './plugin/optional-peer.js';
export { usageOf } from './usage/usage.js';
export { type CallObserver } from './contracts/usage.js';
export { TopUpsToken, type TopUps, type TopUpOffer, type TopUpOutcome, type TopUpRequest } from './contracts/top-ups.js';
export { readConfigFile, ConfigError, type ConfigFileData } from './config/load-config.js';
export { AddressRanges, addressRangeProblem } from './config/address-ranges.js';
export { interpolateEnv, type ConfigEnvironment, type Interpolated } from './config/interpolate-env.js';
export { validateSettings, validateSettingsLayers, settingsProblems, type SettingsSchema, type SettingsRefinement, type SettingsLayer } from './config/plugin-settings.js';
export type { UpstreamBudgetConfig, HedgeConfig, GatewayConfig } from './config/types.js';
