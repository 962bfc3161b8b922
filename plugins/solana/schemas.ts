/**
 * JSON Schemas (draft 2020-12) of the values Solana JSON-RPC methods take: public keys, commitment
 * levels, account encodings, data slices and the config objects of `getAccountInfo` and `getSlot`.
 *
 * Each schema is no stricter than an agave node, except where the service spec states a rule (the
 * commitment levels, the four encodings' `dataSlice` rule): see this plugin's README. An agave node
 * reads config objects with serde and ignores fields it does not know, and reads `null` as an absent
 * optional field, so the config objects here accept both. The `description` of a schema is what a
 * client reads when a value does not match it.
 *
 * @module
 */
import type { JsonSchema } from '../../core/plugin-api.js';

/** The base-58 alphabet (Bitcoin's: no `0`, `O`, `I`, `l`). */
export const BASE58_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** What a public key must be, as the error message quotes it. */
export const PUBKEY_DESCRIPTION = 'a base-58 encoded 32-byte public key';

/**
 * A public key: 32 to 44 base-58 characters (32 bytes encode to at least 32 and at most 44). The
 * pattern cannot tell whether the string decodes to exactly 32 bytes: `getAccountInfo`'s `limits` hook
 * decodes it (see `pubkey.ts`), as agave's `Pubkey::from_str` does.
 */
export const pubkey: JsonSchema = {
  type: 'string',
  pattern: '^[1-9A-HJ-NP-Za-km-z]{32,44}$',
  description: PUBKEY_DESCRIPTION,
};

/** The commitment levels the spec lists, strongest first. */
export const COMMITMENTS = ['finalized', 'confirmed', 'processed'] as const;

/** A commitment level: `finalized`, `confirmed` or `processed` (or `null`: the node's default, finalized). */
export const commitment: JsonSchema = { enum: [...COMMITMENTS, null] };

/**
 * The encodings `getAccountInfo` accepts: the spec's four, plus `binary`, the legacy name of the
 * node's default (a bare base-58 string), which agave still accepts and answers when no encoding is
 * given at all.
 */
export const ACCOUNT_ENCODINGS = ['base58', 'base64', 'base64+zstd', 'jsonParsed', 'binary'] as const;

/** An account encoding of `ACCOUNT_ENCODINGS`, or `null` (the default). */
export const accountEncoding: JsonSchema = { enum: [...ACCOUNT_ENCODINGS, null] };

/**
 * The largest u64 as a JSON parser sees it: 2^64 - 1 has no exact double, and parses to 2^64. Used as an
 * inclusive maximum, it accepts u64::MAX and refuses anything visibly larger.
 */
export const U64_MAX_AS_NUMBER = 2 ** 64;

/** A u64, as agave's serde reads it: a non-negative JSON integer. */
export const u64: JsonSchema = { type: 'integer', minimum: 0, maximum: U64_MAX_AS_NUMBER };

/** A slot number (u64), or `null`. */
export const slotOrNull: JsonSchema = { type: ['integer', 'null'], minimum: 0, maximum: U64_MAX_AS_NUMBER };

/** `dataSlice`: `{offset, length}` in bytes, both required non-negative integers (or `null`: no slice). */
export const dataSlice: JsonSchema = {
  type: ['object', 'null'],
  required: ['offset', 'length'],
  properties: { offset: u64, length: u64 },
};

/** The message a client reads when it sends `dataSlice` with `jsonParsed`. */
export const DATA_SLICE_ENCODING_RULE = 'dataSlice is only allowed with the base58, base64 and base64+zstd encodings';

/** Matches a config whose `dataSlice` is present and not null. */
const withDataSlice: JsonSchema = { required: ['dataSlice'], properties: { dataSlice: { type: 'object' } } };

/**
 * The config object of `getAccountInfo`: `{commitment?, encoding?, dataSlice?, minContextSlot?}`, or
 * `null`. Unknown fields are accepted (agave ignores them). As the spec says, `dataSlice` is refused
 * with `jsonParsed`.
 */
export const accountInfoConfig: JsonSchema = {
  type: ['object', 'null'],
  properties: {
    commitment,
    encoding: accountEncoding,
    dataSlice,
    minContextSlot: slotOrNull,
  },
  if: { type: 'object', required: ['encoding'], properties: { encoding: { const: 'jsonParsed' } } },
  then: { not: withDataSlice, description: DATA_SLICE_ENCODING_RULE },
};

/** The config object of `getSlot`: `{commitment?, minContextSlot?}`, or `null`. Unknown fields are accepted. */
export const contextConfig: JsonSchema = {
  type: ['object', 'null'],
  properties: { commitment, minContextSlot: slotOrNull },
};

/**
 * The schema of a positional `params` array: `schemas` in order, the first `required` of them
 * mandatory, nothing after them.
 */
export function positional(schemas: readonly JsonSchema[], required: number): JsonSchema {
  if (schemas.length === 0) return { type: 'array', maxItems: 0 };
  return { type: 'array', prefixItems: schemas, minItems: required, items: false };
}

/** The `params` of a method without parameters: `[]`, or no `params` member at all (the core validates a missing one as `[]`). */
export const noParams: JsonSchema = positional([], 0);

/** A signature or blockhash as base-58 text: a 64-byte signature encodes to at most 88 characters. */
export const signature: JsonSchema = {
  type: 'string',
  pattern: '^[1-9A-HJ-NP-Za-km-z]{64,88}$',
  description: 'a base-58 encoded 64-byte transaction signature',
};

/** A blockhash: 32 bytes in base-58, as a public key. */
export const blockhash: JsonSchema = { ...pubkey, description: 'a base-58 encoded 32-byte blockhash' };

/** A u64 with an inclusive maximum. */
export function u64UpTo(maximum: number): JsonSchema {
  return { type: 'integer', minimum: 0, maximum };
}

/** An array of public keys, at most `maxItems` of them. */
export function pubkeys(maxItems: number): JsonSchema {
  return { type: 'array', items: pubkey, maxItems };
}

/** Config with only a commitment: `{commitment?}`, or `null`. */
export const commitmentConfig: JsonSchema = { type: ['object', 'null'], properties: { commitment } };

/** The commitments a block or transaction lookup takes: a node refuses `processed` for them. */
export const confirmedCommitment: JsonSchema = { enum: ['finalized', 'confirmed', null], description: 'finalized or confirmed (processed is not supported)' };

/** The encodings of a transaction in `getBlock` and `getTransaction`. */
export const transactionEncoding: JsonSchema = { enum: ['json', 'jsonParsed', 'base58', 'base64', 'binary', null] };

/** `maxSupportedTransactionVersion`: 0 (the only versioned format so far), or absent for legacy only. */
const maxSupportedTransactionVersion: JsonSchema = { type: ['integer', 'null'], minimum: 0, maximum: 255 };

/** The config of `getTransaction`, or a bare encoding string (the legacy form agave still reads). */
export const transactionConfig: JsonSchema = {
  type: ['object', 'null', 'string'],
  if: { type: 'string' },
  then: transactionEncoding,
  else: { properties: { commitment: confirmedCommitment, encoding: transactionEncoding, maxSupportedTransactionVersion } },
};

/** The config of `getBlock`, or a bare encoding. */
export const blockConfig: JsonSchema = {
  type: ['object', 'null', 'string'],
  if: { type: 'string' },
  then: transactionEncoding,
  else: {
    properties: {
      commitment: confirmedCommitment,
      encoding: transactionEncoding,
      transactionDetails: { enum: ['full', 'accounts', 'signatures', 'none', null] },
      rewards: { type: ['boolean', 'null'] },
      maxSupportedTransactionVersion,
    },
  },
};

/** The most filters `getProgramAccounts` takes (agave's `MAX_GET_PROGRAM_ACCOUNT_FILTERS`). */
export const MAX_PROGRAM_ACCOUNT_FILTERS = 4;

/** The longest `memcmp` bytes, base-58 (agave's `MAX_DATA_BASE58_SIZE`: 128 bytes). */
export const MAX_MEMCMP_BASE58_LENGTH = 175;

/** One `getProgramAccounts` filter: `{dataSize}`, `{memcmp: {offset, bytes, encoding?}}` or `{tokenAccountState}`. */
export const programAccountsFilter: JsonSchema = {
  anyOf: [
    { type: 'object', required: ['dataSize'], properties: { dataSize: u64 } },
    {
      type: 'object',
      required: ['memcmp'],
      properties: {
        memcmp: {
          type: 'object',
          required: ['offset', 'bytes'],
          properties: { offset: u64, bytes: { type: 'string', maxLength: MAX_MEMCMP_BASE58_LENGTH }, encoding: { enum: ['base58', 'base64', null] } },
        },
      },
    },
    { type: 'object', required: ['tokenAccountState'] },
  ],
  description: 'a filter {dataSize}, {memcmp: {offset, bytes, encoding?}} or {tokenAccountState}',
};

/** The config of `getProgramAccounts`: the account config plus `withContext`, `filters` (at most 4) and `sortResults`. */
export const programAccountsConfig: JsonSchema = {
  ...accountInfoConfig,
  properties: {
    ...((accountInfoConfig as { properties: Record<string, JsonSchema> }).properties),
    withContext: { type: ['boolean', 'null'] },
    sortResults: { type: ['boolean', 'null'] },
    filters: { type: ['array', 'null'], items: programAccountsFilter, maxItems: MAX_PROGRAM_ACCOUNT_FILTERS },
  },
};

/** The token-account selector of `getTokenAccountsByOwner`/`ByDelegate`: `{mint}` or `{programId}`. */
export const tokenAccountsFilter: JsonSchema = {
  type: 'object',
  minProperties: 1,
  maxProperties: 1,
  properties: { mint: pubkey, programId: pubkey },
  additionalProperties: false,
  description: 'either {mint} or {programId}',
};

/** The config of `getSignaturesForAddress`; `limit` at most 1,000 as on a node. */
export const signaturesForAddressConfig: JsonSchema = {
  type: ['object', 'null'],
  properties: {
    commitment: confirmedCommitment,
    minContextSlot: slotOrNull,
    limit: { type: ['integer', 'null'], minimum: 1, maximum: 1000 },
    before: { anyOf: [signature, { type: 'null' }], description: 'a base-58 signature' },
    until: { anyOf: [signature, { type: 'null' }], description: 'a base-58 signature' },
  },
};

/** A signed transaction as text: base-58 (the default) or base-64, as `config.encoding` says. */
export const wireTransaction: JsonSchema = { type: 'string', minLength: 1, description: 'a signed transaction, base-58 or base-64 encoded' };

/** The encoding of a transaction a client sends. */
const sentEncoding: JsonSchema = { enum: ['base58', 'base64', null] };

/** The config of `sendTransaction`. */
export const sendTransactionConfig: JsonSchema = {
  type: ['object', 'null'],
  properties: {
    encoding: sentEncoding,
    skipPreflight: { type: ['boolean', 'null'] },
    preflightCommitment: commitment,
    maxRetries: { type: ['integer', 'null'], minimum: 0 },
    minContextSlot: slotOrNull,
  },
};

/** The config of `simulateTransaction`. */
export const simulateTransactionConfig: JsonSchema = {
  type: ['object', 'null'],
  properties: {
    encoding: sentEncoding,
    commitment,
    sigVerify: { type: ['boolean', 'null'] },
    replaceRecentBlockhash: { type: ['boolean', 'null'] },
    innerInstructions: { type: ['boolean', 'null'] },
    minContextSlot: slotOrNull,
    accounts: { type: ['object', 'null'], properties: { addresses: pubkeys(100), encoding: accountEncoding } },
  },
};
