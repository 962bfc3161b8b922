/**
 * The filter object of `eth_getLogs`.
 *
 * @module
 */
import type { JsonSchema } from '../../core/plugin-api.js';
import { address, blockNumberOrTag, hash32, nullable, present } from './schemas.js';

/** Topic positions a filter may constrain (a log has at most four topics). */
export const MAX_TOPIC_POSITIONS = 4;

/** `address`: one address or an array of them (any of which matches). */
export const addresses: JsonSchema = {
  type: ['string', 'array', 'null'],
  pattern: address.pattern,
  items: address,
  description: address.description,
};

/** One topic position: null (any), a 32-byte topic, or an array of topics (any of which matches; null inside matches any). */
export const topicPosition: JsonSchema = {
  type: ['string', 'array', 'null'],
  pattern: hash32.pattern,
  items: nullable(hash32),
  description: 'a 32-byte topic (0x followed by 64 hex digits)',
};

/**
 * The `eth_getLogs` filter: `fromBlock`/`toBlock` (block numbers or tags), or `blockHash` alone (it
 * excludes both, with geth's message); `address`; `topics`, at most four positions. `null` members
 * count as absent, as in geth. Unknown members are left to the node.
 */
export const logFilter: JsonSchema = {
  type: 'object',
  properties: {
    fromBlock: nullable(blockNumberOrTag),
    toBlock: nullable(blockNumberOrTag),
    blockHash: nullable(hash32),
    address: addresses,
    topics: { type: ['array', 'null'], maxItems: MAX_TOPIC_POSITIONS, items: topicPosition },
  },
  if: present('blockHash'),
  then: {
    not: { anyOf: [present('fromBlock'), present('toBlock')] },
    description: 'cannot specify both BlockHash and FromBlock/ToBlock, choose one or the other',
  },
};
