/**
 * A network's Solana settings (`networks[].options.solana`): the commitment a call gets when its caller
 * gives none, and whether `requestAirdrop` is served.
 *
 * @module
 */
import { validateSettings } from '../../core/plugin-api.js';
import { COMMITMENTS } from './schemas.js';

/** A commitment level. */
export type Commitment = 'finalized' | 'confirmed' | 'processed';

/** How a network serves Solana calls. */
export interface SolanaNetworkSettings {
  /**
   * The commitment the gateway puts in a call whose caller gave none; absent (the default): the call goes
   * as sent, and the node applies its own default (`finalized`). A commitment the caller gave is never changed.
   */
  readonly commitment?: Commitment;
  /** Whether `requestAirdrop` is served (a devnet or test validator's faucet). Default false. */
  readonly airdrop: boolean;
}

/** The schema of `networks[].options.solana`. */
export const SOLANA_NETWORK_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    commitment: { enum: [...COMMITMENTS] },
    airdrop: { type: 'boolean', default: false },
  },
} as const;

const parsed = new WeakMap<object, SolanaNetworkSettings>();
const DEFAULTS: SolanaNetworkSettings = Object.freeze({ airdrop: false });

/**
 * The Solana settings of a network, from its options (read once per options object).
 *
 * @param where The options' place in the config, for the problems (`networks[0].options.solana`).
 * @throws ConfigError naming the offending field.
 */
export function solanaNetworkSettings(options: Readonly<Record<string, unknown>>, where: string): SolanaNetworkSettings {
  const given = options.solana;
  if (given === undefined) return DEFAULTS;
  const known = parsed.get(options);
  if (known !== undefined) return known;
  const settings = validateSettings<SolanaNetworkSettings>(SOLANA_NETWORK_SCHEMA, [given as Record<string, unknown>], where);
  parsed.set(options, settings);
  return settings;
}
