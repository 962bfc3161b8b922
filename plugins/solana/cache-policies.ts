/**
 * The solana family's response-cache policies, by finality. The cache does not follow Solana's forks, so
 * it keeps an answer for good only where a `finalized` answer cannot change (a finalized block or
 * transaction, the genesis hash); state reads are kept for a short TTL chosen by the call's commitment;
 * `processed` answers (which a fork may roll back) are never kept, and neither are the answers that must
 * be live (`getHealth`, `getLatestBlockhash`, `getSignatureStatuses`, fees) or that are writes
 * (`sendTransaction`, `requestAirdrop`) or executions (`simulateTransaction`). A method without a policy
 * here is never cached. Base-58 keys are case-sensitive in cache keys (only `0x` hex is lower-cased).
 *
 * @module
 */
import type { CacheScope, FamilyCachePolicies, MethodCachePolicy } from '../../core/family-api.js';
import { commitmentOf } from './commitment.js';
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

/** The cache classes of the solana methods, as the README's table names them. */
export type SolanaCacheClass = 'never' | 'commitment' | 'final' | 'forever' | 'slow';

/** A state read: kept for the TTL of its commitment; never at `processed`. */
const byCommitment: MethodCachePolicy = {
  scope: (params): CacheScope | undefined => {
    const commitment = commitmentOf(params);
    if (commitment === 'confirmed') return { scope: 'ttl', ttlMs: SOLANA_CACHE_TTL_MS.confirmed };
    if (commitment === 'finalized') return { scope: 'ttl', ttlMs: SOLANA_CACHE_TTL_MS.finalized };
    return undefined;
  },
};

/** A block or a transaction: final once `finalized` (kept for good; a `null` is never kept), else as `byCommitment`. */
const finalAtFinalized: MethodCachePolicy = {
  scope: (params, head): CacheScope | undefined => (commitmentOf(params) === 'finalized' ? { scope: 'forever' } : byCommitment.scope(params, head)),
};

/** Never changes on a cluster. */
const forever: MethodCachePolicy = { scope: () => ({ scope: 'forever' }) };

/** Changes only on an upgrade, a restart or an epoch: kept `ttlMs`. */
function slow(ttlMs: number): MethodCachePolicy {
  return { scope: () => ({ scope: 'ttl', ttlMs }) };
}

/** Each cached method's class (methods not listed are `never`). */
export const SOLANA_CACHE_CLASSES: Readonly<Record<string, SolanaCacheClass>> = {
  getAccountInfo: 'commitment',
  getBalance: 'commitment',
  getMultipleAccounts: 'commitment',
  getProgramAccounts: 'commitment',
  getTokenAccountBalance: 'commitment',
  getTokenSupply: 'commitment',
  getTokenAccountsByOwner: 'commitment',
  getTokenAccountsByDelegate: 'commitment',
  getTokenLargestAccounts: 'commitment',
  getLargestAccounts: 'commitment',
  getSupply: 'commitment',
  getVoteAccounts: 'commitment',
  getSlot: 'commitment',
  getBlockHeight: 'commitment',
  getEpochInfo: 'commitment',
  getSlotLeader: 'commitment',
  getSlotLeaders: 'commitment',
  getTransactionCount: 'commitment',
  getLeaderSchedule: 'commitment',
  getBlockProduction: 'commitment',
  getInflationGovernor: 'commitment',
  getInflationReward: 'commitment',
  getStakeMinimumDelegation: 'commitment',
  getSignaturesForAddress: 'commitment',
  getBlocks: 'commitment',
  getBlocksWithLimit: 'commitment',
  getBlockTime: 'commitment',
  getBlock: 'final',
  getTransaction: 'final',
  getGenesisHash: 'forever',
  getEpochSchedule: 'forever',
  getVersion: 'slow',
  getIdentity: 'slow',
  getMinimumBalanceForRentExemption: 'slow',
  getClusterNodes: 'slow',
  getInflationRate: 'slow',
  getFirstAvailableBlock: 'slow',
  minimumLedgerSlot: 'slow',
  getHighestSnapshotSlot: 'slow',
};

/** How long each `slow` method is kept, in ms: membership and the ledger's low end move in seconds, versions and rent in minutes. */
const SLOW_TTL_MS: Readonly<Record<string, number>> = {
  getVersion: 60_000,
  getIdentity: 60_000,
  getMinimumBalanceForRentExemption: 60_000,
  getClusterNodes: 5_000,
  getInflationRate: 5_000,
  getFirstAvailableBlock: 5_000,
  minimumLedgerSlot: 5_000,
  getHighestSnapshotSlot: 5_000,
};

/** The policy of a class. */
function policyOf(method: string, cacheClass: SolanaCacheClass): MethodCachePolicy | undefined {
  if (cacheClass === 'commitment') return byCommitment;
  if (cacheClass === 'final') return finalAtFinalized;
  if (cacheClass === 'forever') return forever;
  if (cacheClass === 'slow') return slow(SLOW_TTL_MS[method] ?? 5_000);
  return undefined;
}

/** The policies of every cacheable solana method. */
export const SOLANA_CACHE_POLICIES: FamilyCachePolicies = {
  family: SOLANA_FAMILY_NAME,
  methods: Object.fromEntries(
    Object.entries(SOLANA_CACHE_CLASSES).flatMap(([method, cacheClass]) => {
      const policy = policyOf(method, cacheClass);
      return policy === undefined ? [] : [[method, policy]];
    }),
  ),
};
