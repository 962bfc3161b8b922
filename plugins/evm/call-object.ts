/**
 * The call object of `eth_call`, `eth_estimateGas` and `eth_createAccessList`.
 *
 * @module
 */
import type { JsonSchema } from '../../core/plugin-api.js';
import { address, hexData, nullable, quantity } from './schemas.js';

/** Options of `callObject`. */
export interface CallObjectOptions {
  /**
   * Require `maxFeePerGas` and `maxPriorityFeePerGas` to come together (the spec's rule for
   * `eth_createAccessList`). geth fills a missing one in itself, so only that method asks for it.
   */
  readonly pairedFeeCaps?: boolean;
}

/**
 * The schema of a call object. Every field is optional, `from` included: the spec lists `from` as
 * required for `eth_call`, but viem omits it when no account is set and nodes (geth, anvil) accept
 * a call without it, so requiring it would break real clients.
 *
 * The payload may come as `input` (viem, geth's own name) or `data` (ethers, the spec's name).
 * Fields the gateway does not check (`chainId`, `type`, `nonce`, `accessList`, `blobVersionedHashes`,
 * `authorizationList`...) are accepted as they are and left to the node. An explicit `null` counts as
 * an absent field, as it does for geth and anvil.
 */
export function callObject(options: CallObjectOptions = {}): JsonSchema {
  const schema: Record<string, unknown> = {
    type: 'object',
    properties: {
      from: nullable(address),
      to: nullable(address),
      gas: nullable(quantity),
      gasPrice: nullable(quantity),
      maxFeePerGas: nullable(quantity),
      maxPriorityFeePerGas: nullable(quantity),
      value: nullable(quantity),
      data: nullable(hexData),
      input: nullable(hexData),
    },
  };
  if (options.pairedFeeCaps === true) {
    schema.dependentRequired = { maxFeePerGas: ['maxPriorityFeePerGas'], maxPriorityFeePerGas: ['maxFeePerGas'] };
  }
  return schema;
}

/** The optional state-override set (`eth_call`, `eth_estimateGas`): an object keyed by address, checked by the node. */
export const stateOverride: JsonSchema = { type: ['object', 'null'] };

/** The optional block-override object (`eth_call`, `eth_estimateGas`): checked by the node. */
export const blockOverrides: JsonSchema = { type: ['object', 'null'] };
