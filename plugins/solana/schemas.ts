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
