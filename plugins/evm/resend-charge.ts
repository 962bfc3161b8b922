/**
 * One charge for a transaction sent again: the same signed bytes sent by the same key on the same network
 * within the resend window are one transaction, answered with one hash (see `resent-transaction.ts`), so
 * they are charged once, in every worker and instance of a deployment (the core's `chargeOnceStage`).
 *
 * @module
 */
import type { StageDefinition } from '../../core/plugin-api.js';
import { chargeOnceStage } from '../../core/family-api.js';
import type { DedupMarks } from '../../core/store-api.js';
import { EVM_FAMILY_NAME } from './family.js';

/** What {@link resendChargeStage} needs. */
export interface ResendChargeOptions {
  /** The marks of the deployment (resolved on first use: a store plugin may register them after this one). */
  readonly marks: () => DedupMarks;
  /** The window, in milliseconds (read per call: a reload may change it). */
  readonly windowMs: () => number;
}

/**
 * The pipeline stage, right before `meter`: an `eth_sendRawTransaction` whose signed bytes (hex, any
 * case) the key sent on the network within the window is priced at 0 credits.
 */
export function resendChargeStage(options: ResendChargeOptions): StageDefinition {
  return chargeOnceStage({
    name: 'evm.resendCharge',
    family: EVM_FAMILY_NAME,
    method: 'eth_sendRawTransaction',
    identity: (params) => (Array.isArray(params) && typeof params[0] === 'string' ? params[0].toLowerCase() : undefined),
    ...options,
  });
}
