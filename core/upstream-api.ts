/**
 * For plugins that talk to upstreams themselves or provide them: the upstream sender (failover, health,
 * breakers), the failure kinds, selectors and probes, the attempt observer, upstream budgets, and embedded
 * upstreams (nodes a plugin starts with the gateway). Import it as `tollgate/upstream`.
 *
 * @packageDocumentation
 */
import 'reflect-metadata';

export { createUpstreamSender, type UpstreamSender, type UpstreamAnswer, type UpstreamSenderOptions, type UpstreamSenderDependencies } from './upstream/upstream-sender.js';
export type { EmbeddedUpstreamProvider, EmbeddedUpstreamInstance } from './plugin/plugin.js';
export { pinEmbeddedUpstreams, type PinnedUpstreams } from './gateway/pin-embedded-upstreams.js';
export { UpstreamFailure, type FailureKind } from './upstream/upstream-failure.js';
export type { UpstreamSelector, UpstreamStatus } from './upstream/selector.js';
export type { UpstreamBudgets, UpstreamBudget, BudgetTake } from './upstream/upstream-budgets.js';
export { networkUnavailable } from './upstream/unavailable.js';
export { probeUpstream, type ProbeOutcome, type ProbeOptions } from './upstream/probe.js';
export type { Upstream, UpstreamChannel, UpstreamRequest, UpstreamSettings } from './types.js';
export { AttemptObserverToken, type AttemptObserver, type AttemptEnd } from './upstream/attempt-observer.js';
