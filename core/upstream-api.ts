/**
 * For plugins that talk to upstreams themselves or provide them: the upstream sender (failover, health,
 * breakers), the failure kinds, selectors and probes, the attempt observer, upstream budgets, and embedded
 * upstreams (nodes a plugin starts with the gateway). Import it as `tollgate/upstream`.
 *
 * @packageDocumentation
 */
import 'reflect-metadata';

export { createUpstreamSender, type UpstreamSender, type UpstreamAnswer, type UpstreamSenderOptions, type UpstreamSenderDependencies } from './upstream/upstream-sender.js';
export { UpstreamFailure, type FailureKind } from './contracts/upstream-failure.js';
export type { UpstreamSelector, UpstreamStatus } from './contracts/selector.js';
export { networkUnavailable } from './upstream/unavailable.js';
export { probeUpstream, type ProbeOutcome, type ProbeOptions } from './upstream/probe.js';
export type { Upstream, UpstreamRequest, UpstreamSettings } from './contracts/upstream.js';
export type { UpstreamChannel } from './contracts/call.js';
export { AttemptObserverToken, type AttemptObserver, type AttemptEnd } from './upstream/attempt-observer.js';
export { pinEmbeddedUpstreams, type PinnedUpstreams } from './gateway/pin-embedded-upstreams.js';
export type { EmbeddedUpstreamProvider, EmbeddedUpstreamInstance } from './contracts/plugin.js';
export type { UpstreamBudgets, UpstreamBudget, BudgetTake } from './contracts/upstream-budgets.js';
