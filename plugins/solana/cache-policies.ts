/**
 * The solana family's response-cache policies. The cache does not track Solana's finality, so every
 * answer is kept for a short TTL chosen by the call's commitment; `processed` answers (which a fork may
 * still roll back) and `getHealth` (which must be live) are never cached.
 *
 * @module
 */
import type { CacheScope, FamilyCachePolicies, MethodCachePolicy } from '../../core/plugin-api.js';
import { SOLANA_FAMILY_NAME } from './family.js';

/** How long a state read is kept, in ms, by the commitment it asked for. */
export interface SolanaCacheTtls {
  /** `confirmed`: one slot. */
  readonly confirmed: number;
  /** `finalized` (a node's default): the finalized root moves every slot too, so barely longer. */
  readonly finalized: number;
}

/** How long an answer is kept, by commitment: one slot (400 ms) when `confirmed`, 1 s when `finalized`. */
export const SOLANA_CACHE_TTL_MS: SolanaCacheTtls = Object.freeze({ confirmed: 400, finalized: 1000 });

/** The commitment a call asks for: its config object's, else the node's default, `finalized`. */
function commitmentOf(params: unknown): string {
  if (!Array.isArray(params)) return 'finalized';
  for (const param of params) {
    const commitment = (param as { commitment?: unknown } | null)?.commitment;
    if (typeof param === 'object' && typeof commitment === 'string') return commitment;
  }
  return 'finalized';
}

/** A state read: kept for the TTL of its commitment. */
const byCommitment: MethodCachePolicy = {
  scope: (params): CacheScope | undefined => {
    const commitment = commitmentOf(params);
    if (commitment === 'confirmed') return { scope: 'ttl', ttlMs: SOLANA_CACHE_TTL_MS.confirmed };
    if (commitment === 'finalized') return { scope: 'ttl', ttlMs: SOLANA_CACHE_TTL_MS.finalized };
    return undefined;
  },
};

/** The policies of every cacheable solana method. */
export const SOLANA_CACHE_POLICIES: FamilyCachePolicies = {
  family: SOLANA_FAMILY_NAME,
  methods: {
    getAccountInfo: byCommitment,
    getSlot: byCommitment,
    // The node's software changes only on an upgrade, and cluster membership slowly.
    getVersion: { scope: () => ({ scope: 'ttl', ttlMs: 60_000 }) },
    getClusterNodes: { scope: () => ({ scope: 'ttl', ttlMs: 5_000 }) },
  },
};
