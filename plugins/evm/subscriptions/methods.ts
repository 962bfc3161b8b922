/**
 * `eth_subscribe` and `eth_unsubscribe`: offered on connection-holding transports only.
 *
 * @module
 */
import type { JsonSchema } from '../../../core/plugin-api.js';
import type { MethodDefinition } from '../../../core/family-api.js';
import { addresses, MAX_TOPIC_POSITIONS, topicPosition } from '../log-filter.js';
import { positional } from '../schemas.js';

/** The subscription kinds, as geth names them. */
export const SUBSCRIPTION_KINDS = ['newHeads', 'logs', 'newPendingTransactions'] as const;

/** A subscription kind. */
export type SubscriptionKind = (typeof SUBSCRIPTION_KINDS)[number];

/**
 * The filter of a `logs` subscription: `address` and `topics` as `eth_getLogs` reads them (geth's
 * `FilterCriteria`); a subscription follows the head, so block ranges and `blockHash` are refused.
 */
const logsSubscriptionFilter: JsonSchema = {
  type: 'object',
  properties: {
    address: addresses,
    topics: { type: ['array', 'null'], maxItems: MAX_TOPIC_POSITIONS, items: topicPosition },
  },
  additionalProperties: false,
  description: 'a filter with address and topics only (a subscription follows the head: no fromBlock, toBlock or blockHash)',
};

const kindIs = (kind: SubscriptionKind): JsonSchema => ({ prefixItems: [{ const: kind }] });

/**
 * `[kind]`, `["logs", filter]` or `["newPendingTransactions", false]` (hashes; full transactions are
 * not offered).
 */
const subscribeParams: JsonSchema = {
  type: 'array',
  minItems: 1,
  maxItems: 2,
  prefixItems: [
    { enum: SUBSCRIPTION_KINDS, description: `one of ${SUBSCRIPTION_KINDS.join(', ')}` },
    // What the second parameter may be depends on the kind: the conditions below say it.
    { description: 'a logs filter, or false for newPendingTransactions' },
  ],
  allOf: [
    { if: kindIs('newHeads'), then: { maxItems: 1, description: 'newHeads takes no filter' } },
    { if: kindIs('logs'), then: { prefixItems: [true, logsSubscriptionFilter] } },
    { if: kindIs('newPendingTransactions'), then: { prefixItems: [true, { const: false, description: 'only transaction hashes are offered' }] } },
  ],
};

/**
 * The methods, priced as the hosted service prices them: `eth_subscribe` 5 credits, `eth_unsubscribe`
 * 10 (its method reference pages). Both may go to a partner as the service's `eth_subscribe` may.
 */
export const EVM_SUBSCRIPTION_METHODS: readonly MethodDefinition[] = [
  {
    name: 'eth_subscribe',
    params: subscribeParams,
    paramNames: ['kind', 'filter'],
    credits: 5,
    failover: true,
    idempotent: false,
    transports: ['ws'],
    description: 'Opens a subscription: newHeads, logs (address and topics) or newPendingTransactions (hashes); events arrive as eth_subscription notifications.',
  },
  {
    name: 'eth_unsubscribe',
    params: positional([{ type: 'string', description: 'a subscription id' }], 1),
    paramNames: ['subscription'],
    credits: 10,
    failover: true,
    transports: ['ws'],
    description: 'Closes a subscription of this connection: true if it was open, false otherwise.',
  },
];
