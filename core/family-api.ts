/**
 * For authors of network families: the family and method contracts (schemas, limits, batch codecs, the
 * call protocol, node errors and how a method settles them), subscriptions and streams, the JSON-RPC answer
 * types a family reads, the answer head, the charge-once stage and the cache policies a family declares.
 * Import it as `tollgate/family`; what every plugin needs (tokens, the request context, stages, settings)
 * is in `tollgate/plugin`, and the stores a family may use (filters, pins, dedup marks) in `tollgate/store`.
 *
 * @packageDocumentation
 */
import 'reflect-metadata';

export type { MethodDefinition, NetworkFamily, HealthProbe, LimitsInput, NodeErrorInput, NodeErrorSettlement, BatchCodec, CallBatch, CallProtocol, NetworkMethod, NetworkRuntime } from './contracts/request-context.js';
export type { SubscriptionSupport, SubscriptionMethod, SubscriptionIdFormat, StreamRequest, StreamContinuity, StreamAsk } from './contracts/subscription.js';
export { NodeAnswerError } from './jsonrpc/node-answer-error.js';
export type { JsonRpcResponse, JsonRpcSuccess, JsonRpcFailure } from './contracts/json-rpc.js';
export type { JsonRpcErrorObject } from './errors/json-rpc-error.js';
export type { AnswerHead } from './contracts/shared-heads.js';
export type { AnswerView } from './contracts/answer-view.js';
export { answerView, type AnswerViewOptions } from './jsonrpc/answer-view.js';
export { chargeOnceStage, type ChargeOnceOptions } from './pipeline/charge-once.js';
export { CachePoliciesToken, type CacheScope, type ChainHead, type FamilyCachePolicies, type MethodCachePolicy } from './network/cache-policy.js';
