/**
 * The nine Solana subscriptions and their unsubscribes (agave's pub-sub API): offered on
 * connection-holding transports only, each with its parameter schema and credits.
 *
 * @module
 */
import type { JsonSchema } from '../../../core/plugin-api.js';
import type { MethodDefinition, SubscriptionMethod } from '../../../core/family-api.js';
import { accountEncoding, commitment, dataSlice, positional, pubkey, u64 } from '../schemas.js';

/** A transaction signature: 64 bytes in base 58 (64 to 88 characters). */
const signature: JsonSchema = { type: 'string', pattern: '^[1-9A-HJ-NP-Za-km-z]{64,88}$', description: 'a base-58 encoded 64-byte transaction signature' };

/** `{commitment?}`, or `null`. Unknown fields are accepted (agave ignores them). */
const commitmentConfig: JsonSchema = { type: ['object', 'null'], properties: { commitment } };

/** `accountSubscribe`'s config: `{commitment?, encoding?, dataSlice?}`. */
const accountConfig: JsonSchema = { type: ['object', 'null'], properties: { commitment, encoding: accountEncoding, dataSlice } };

/** Agave's most filters of one program subscription (its `MAX_GET_PROGRAM_ACCOUNT_FILTERS`). */
export const MAX_PROGRAM_FILTERS = 4;

/** A program-account filter: `{dataSize}` or `{memcmp: {offset, bytes, encoding?}}` (bytes at most 128 base-58 characters, as agave). */
const programFilter: JsonSchema = {
  oneOf: [
    { type: 'object', required: ['dataSize'], properties: { dataSize: u64 }, additionalProperties: false },
    {
      type: 'object',
      required: ['memcmp'],
      additionalProperties: false,
      properties: {
        memcmp: {
          type: 'object',
          required: ['offset', 'bytes'],
          properties: { offset: u64, bytes: { type: 'string', maxLength: 175 }, encoding: { enum: ['base58', 'base64'] } },
        },
      },
    },
  ],
  description: 'a filter: {"dataSize": n} or {"memcmp": {"offset": n, "bytes": "..."}}',
};

/** `programSubscribe`'s config: an account config plus `filters` (at most four) and `withContext`. */
const programConfig: JsonSchema = {
  type: ['object', 'null'],
  properties: {
    commitment,
    encoding: accountEncoding,
    dataSlice,
    filters: { type: ['array', 'null'], maxItems: MAX_PROGRAM_FILTERS, items: programFilter },
    withContext: { type: ['boolean', 'null'] },
  },
};

/** `logsSubscribe`'s filter: `"all"`, `"allWithVotes"` or `{mentions: [one address]}` (agave takes exactly one). */
const logsFilter: JsonSchema = {
  oneOf: [
    { enum: ['all', 'allWithVotes'] },
    { type: 'object', required: ['mentions'], properties: { mentions: { type: 'array', minItems: 1, maxItems: 1, items: pubkey } }, additionalProperties: false },
  ],
  description: '"all", "allWithVotes" or {"mentions": [address]} (one address)',
};

/** `blockSubscribe`'s filter: `"all"` or `{mentionsAccountOrProgram: address}`. */
const blockFilter: JsonSchema = {
  oneOf: [
    { const: 'all' },
    { type: 'object', required: ['mentionsAccountOrProgram'], properties: { mentionsAccountOrProgram: pubkey }, additionalProperties: false },
  ],
  description: '"all" or {"mentionsAccountOrProgram": address}',
};

/** `blockSubscribe`'s config. */
const blockConfig: JsonSchema = {
  type: ['object', 'null'],
  properties: {
    commitment,
    encoding: { enum: ['json', 'jsonParsed', 'base58', 'base64', null] },
    transactionDetails: { enum: ['full', 'accounts', 'signatures', 'none', null] },
    showRewards: { type: ['boolean', 'null'] },
    maxSupportedTransactionVersion: { type: ['integer', 'null'], minimum: 0, maximum: 255 },
  },
};

/** `signatureSubscribe`'s config: `{commitment?, enableReceivedNotification?}`. */
const signatureConfig: JsonSchema = {
  type: ['object', 'null'],
  properties: { commitment, enableReceivedNotification: { type: ['boolean', 'null'] } },
};

/** An unsubscribe's params: `[id]`, the number the subscribe answered. */
const unsubscribeParams: JsonSchema = positional([{ type: 'integer', minimum: 0, description: 'a subscription id (the number the subscribe call answered)' }], 1);

/** One subscription of the table: its three method names, params, credits and description. */
interface SolanaSubscription {
  readonly name: string;
  readonly params: JsonSchema;
  readonly paramNames: readonly string[];
  readonly description: string;
}

/** The nine subscriptions, by the stem of their method names (`slot` gives slotSubscribe, slotUnsubscribe, slotNotification). */
const SUBSCRIPTIONS: readonly SolanaSubscription[] = [
  { name: 'account', params: positional([pubkey, accountConfig], 1), paramNames: ['address', 'config'], description: "An account's lamports, owner and data each time they change." },
  { name: 'block', params: positional([blockFilter, blockConfig], 1), paramNames: ['filter', 'config'], description: 'Each block confirmed or finalized, all or those mentioning an address.' },
  { name: 'logs', params: positional([logsFilter, commitmentConfig], 1), paramNames: ['filter', 'config'], description: "Each transaction's logs: all, with votes, or those mentioning an address." },
  { name: 'program', params: positional([pubkey, programConfig], 1), paramNames: ['programId', 'config'], description: 'Each change of an account a program owns, optionally filtered (dataSize, memcmp).' },
  { name: 'root', params: positional([], 0), paramNames: [], description: 'Each new root slot.' },
  { name: 'signature', params: positional([signature, signatureConfig], 1), paramNames: ['signature', 'config'], description: "A transaction's outcome once it reaches the commitment level; the subscription then ends." },
  { name: 'slot', params: positional([], 0), paramNames: [], description: 'Each slot the node processes: {parent, root, slot}.' },
  { name: 'slotsUpdates', params: positional([], 0), paramNames: [], description: 'Each step of each slot (first shred, completed, frozen, optimistic confirmation, root...).' },
  { name: 'vote', params: positional([], 0), paramNames: [], description: 'Each vote the node sees in gossip.' },
];

/** Credits of a subscribe call (every stream alike: the stream's events are what costs). */
export const SOLANA_SUBSCRIBE_CREDITS = 5;

/** Credits of an unsubscribe call, as `eth_unsubscribe`. */
export const SOLANA_UNSUBSCRIBE_CREDITS = 10;

/** The method names of each subscription (`slotSubscribe`, `slotUnsubscribe`, `slotNotification`). */
export const SOLANA_SUBSCRIPTION_METHODS: readonly SubscriptionMethod[] = SUBSCRIPTIONS.map(({ name }) => ({
  subscribe: `${name}Subscribe`,
  unsubscribe: `${name}Unsubscribe`,
  notification: `${name}Notification`,
}));

/**
 * The eighteen method definitions, WebSocket only (`transports: ['ws']`). Like the family's other
 * methods they never go to a partner provider (the spec names no Solana method as failover-eligible):
 * a stream moves between the network's primaries.
 */
export const SOLANA_SUBSCRIPTION_DEFINITIONS: readonly MethodDefinition[] = SUBSCRIPTIONS.flatMap((s) => [
  {
    name: `${s.name}Subscribe`,
    params: s.params,
    paramNames: s.paramNames,
    credits: SOLANA_SUBSCRIBE_CREDITS,
    failover: false,
    idempotent: false,
    transports: ['ws'],
    description: `${s.description} Notifications arrive as ${s.name}Notification.`,
  },
  {
    name: `${s.name}Unsubscribe`,
    params: unsubscribeParams,
    paramNames: ['subscription'],
    credits: SOLANA_UNSUBSCRIBE_CREDITS,
    failover: false,
    transports: ['ws'],
    description: `Closes a ${s.name}Subscribe subscription of this connection: true; an id it does not hold is an invalid-params error, as on a node.`,
  },
]);
