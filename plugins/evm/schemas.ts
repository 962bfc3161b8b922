/**
 * JSON Schemas (draft 2020-12) of the value types EVM JSON-RPC methods take: quantities, addresses,
 * hashes, byte strings and block identifiers.
 *
 * Each schema is no stricter than a real node (geth, anvil): a gateway must not refuse what a node
 * accepts. The `description` of a schema is what a client reads when a value does not match its
 * pattern (`invalid argument 0 (address): must be a 20-byte address ...`).
 *
 * @module
 */
import type { JsonSchema } from '../../core/plugin-api.js';

/** A string schema with a pattern and the description the error message quotes. */
export type PatternSchema = {
  /** Always a string (or a string or null, see `nullable`). */
  readonly type: 'string' | readonly ['string', 'null'];
  /** The regular expression the string must match. */
  readonly pattern: string;
  /** What the value must be, as a phrase: "a 20-byte address (...)". */
  readonly description: string;
};

/** The block tags every block parameter accepts. */
export const BLOCK_TAGS = ['latest', 'earliest', 'pending', 'safe', 'finalized'] as const;

// geth accepts both `0x` and `0X` as prefix (hexutil's has0xPrefix); so do we.
const HEX_DIGITS = '0[xX][0-9a-fA-F]+';
const tagAlternatives = (tags: readonly string[]): string => `^(${[...tags, HEX_DIGITS].join('|')})$`;

/**
 * A hex-encoded quantity: `0x` then at least one hex digit. Leading zeros (`0x01`) are accepted:
 * anvil accepts them everywhere; geth refuses them in most fields and answers its own error.
 * Plain JSON numbers and decimal strings are refused (geth refuses them, and they are not the wire
 * format the spec describes).
 */
export const quantity: PatternSchema = {
  type: 'string',
  pattern: `^${HEX_DIGITS}$`,
  description: 'a hex quantity (0x followed by hex digits)',
};

/** A 20-byte address: `0x` and 40 hex digits, any case (no checksum check: nodes do not check it either). */
export const address: PatternSchema = {
  type: 'string',
  pattern: '^0[xX][0-9a-fA-F]{40}$',
  description: 'a 20-byte address (0x followed by 40 hex digits)',
};

/** A 32-byte hash: `0x` and 64 hex digits. */
export const hash32: PatternSchema = {
  type: 'string',
  pattern: '^0[xX][0-9a-fA-F]{64}$',
  description: 'a 32-byte hash (0x followed by 64 hex digits)',
};

/** Hex-encoded bytes: `0x` and an even number of hex digits (`0x` alone is empty data). */
export const hexData: PatternSchema = {
  type: 'string',
  pattern: '^0[xX]([0-9a-fA-F]{2})*$',
  description: 'hex data (0x followed by an even number of hex digits)',
};

/**
 * A storage slot of `eth_getStorageAt`: at most 32 bytes of hex, `0x` optional, odd length allowed,
 * as geth's `decodeHash` reads it (`"0x0"`, `"0"` and a full 32-byte key are all valid).
 */
export const storageSlot: PatternSchema = {
  type: 'string',
  pattern: '^(0[xX])?[0-9a-fA-F]{0,64}$',
  description: 'a storage slot (hex, at most 32 bytes)',
};

/** A block number (hex quantity) or one of the tags `latest`, `earliest`, `pending`, `safe`, `finalized`. */
export const blockNumberOrTag: PatternSchema = {
  type: 'string',
  pattern: tagAlternatives(BLOCK_TAGS),
  description: 'a hex block number or a block tag (latest, earliest, pending, safe, finalized)',
};

/**
 * Like `blockNumberOrTag` without `safe`: the spec documents `eth_getUncleByBlockNumberAndIndex`
 * as not supporting it (`finalized` is to be used instead).
 */
export const blockNumberOrTagExceptSafe: PatternSchema = {
  type: 'string',
  pattern: tagAlternatives(BLOCK_TAGS.filter((tag) => tag !== 'safe')),
  description: 'a hex block number or a block tag (latest, earliest, pending, finalized; safe is not supported by this method)',
};

/** The same string schema, also accepting `null` (geth and anvil read an explicit null as an absent field). */
export function nullable(schema: PatternSchema): PatternSchema {
  return { ...schema, type: ['string', 'null'] };
}

/**
 * Matches an object whose member `name` is present and not null (and nothing that is not an object:
 * `required` alone would hold for any string).
 */
export function present(name: string): JsonSchema {
  return { type: 'object', required: [name], properties: { [name]: { not: { type: 'null' } } } };
}

/**
 * An EIP-1898 block identifier, as geth's `BlockNumberOrHash` reads it: a block number or tag, a
 * 32-byte block hash as a plain string, or an object `{ blockHash, requireCanonical? }` or
 * `{ blockNumber }` (exactly one of the two). Used by `eth_call`, `eth_createAccessList` and the
 * state reads (`eth_getBalance`, `eth_getCode`...).
 */
export const blockId: JsonSchema = {
  type: ['string', 'object'],
  if: { type: 'string' },
  then: {
    // A 32-byte hash is 0x and 64 hex digits, which the hex-number alternative already matches.
    pattern: tagAlternatives(BLOCK_TAGS),
    description: 'a hex block number, a 32-byte block hash or a block tag (latest, earliest, pending, safe, finalized)',
  },
  else: {
    properties: {
      blockHash: nullable(hash32),
      blockNumber: nullable(blockNumberOrTag),
      requireCanonical: { type: ['boolean', 'null'] },
    },
    if: present('blockHash'),
    then: { not: present('blockNumber'), description: 'cannot specify both blockHash and blockNumber, choose one or the other' },
    else: { required: ['blockNumber'], properties: { blockNumber: { not: { type: 'null' }, description: 'must not be null' } } },
  },
};

/**
 * The schema of a positional `params` array: `schemas` in order, the first `required` of them
 * mandatory, nothing after them.
 */
export function positional(schemas: readonly JsonSchema[], required: number): JsonSchema {
  // An empty prefixItems is not a valid schema: "no parameters" is an array of at most 0 items.
  if (schemas.length === 0) return { type: 'array', maxItems: 0 };
  return { type: 'array', prefixItems: schemas, minItems: required, items: false };
}

/** The `params` of a method without parameters: `[]` (or no `params` member at all). */
export const noParams: JsonSchema = positional([], 0);
