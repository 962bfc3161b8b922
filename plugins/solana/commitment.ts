/**
 * Commitment levels of calls: which one a call asks for, where its config object sits, and the network's
 * default commitment put in a call whose caller gave none.
 *
 * @module
 */
import type { LimitsInput } from '../../core/family-api.js';
import { solanaNetworkSettings, type Commitment } from './network-settings.js';

/** The commitment a node applies when a call names none. */
export const NODE_DEFAULT_COMMITMENT: Commitment = 'finalized';

/** Whether `value` is a config object (not an array, not null). */
function isConfig(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The commitment a call names in any of its config objects, or undefined when it names none. */
export function givenCommitment(params: unknown): string | undefined {
  if (!Array.isArray(params)) return undefined;
  for (const param of params) {
    if (isConfig(param) && typeof param.commitment === 'string') return param.commitment;
  }
  return undefined;
}

/** The commitment a call is served at: the one it names, else the node's default, `finalized`. */
export function commitmentOf(params: unknown): string {
  return givenCommitment(params) ?? NODE_DEFAULT_COMMITMENT;
}

/** The methods that take no `processed` commitment (a node refuses it for blocks and transactions). */
const CONFIRMED_AT_LEAST = new Set(['getBlock', 'getBlocks', 'getBlocksWithLimit', 'getTransaction', 'getSignaturesForAddress']);

/** Where a method's config object may sit, besides its `config` position: agave reads it in an earlier slot too. */
const EARLIER_CONFIG: Readonly<Record<string, number>> = { getBlocks: 1, getLeaderSchedule: 0 };

/**
 * A `limits` hook that puts the network's default commitment (`options.solana.commitment`) in the config
 * object at `position` of a call that names none; a call that names one, a network without a default,
 * and a default a method does not take (`processed` for a block) leave the call as sent.
 */
export function defaultCommitment(method: string, position: number): (input: LimitsInput) => unknown[] | undefined {
  const earlier = EARLIER_CONFIG[method];
  return ({ params, network }) => {
    const fallback = solanaNetworkSettings(network.options, `networks[${network.name}].options.solana`).commitment;
    if (fallback === undefined || givenCommitment(params) !== undefined) return undefined;
    if (fallback === 'processed' && CONFIRMED_AT_LEAST.has(method)) return undefined;
    const list = Array.isArray(params) ? [...(params as unknown[])] : [];
    const at = earlier !== undefined && isConfig(list[earlier]) ? earlier : position;
    while (list.length < at) list.push(null);
    const current = list[at];
    // A bare string there is the legacy form of the config: the encoding alone.
    list[at] = isConfig(current) ? { ...current, commitment: fallback } : typeof current === 'string' ? { encoding: current, commitment: fallback } : { commitment: fallback };
    return list;
  };
}
