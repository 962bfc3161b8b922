/**
 * What a network family declares so the response cache knows how long each method's answers stay true.
 *
 * @module
 */
import type { InjectionToken } from 'tsyringe';
import type { NetworkRuntime } from '../contracts/request-context.js';

/** The chain as the cache last saw it: the head and the finalized height. */
export interface ChainHead {
  /** Height of the head block. */
  readonly number: number;
  /** Hash of the head block. */
  readonly hash: string;
  /** Hash of the head's parent, so a new head that does not extend the last one reveals a reorg. */
  readonly parentHash: string;
  /** Height of the highest finalized block (at or below {@link number}). */
  readonly finalized: number;
}

/**
 * How an answer may be kept, decided from the call before it is sent:
 * - `forever`: it never changes (the chain id, a finalized block);
 * - `block`: it is about the block at this height: kept for good once the height is finalized, until the
 *   next reorg while it is not, and never when the height is above the head (it may still appear);
 * - `answer`: the answer says which block it belongs to ({@link MethodCachePolicy.blockOf}), then as `block`;
 * - `unfinalized`: about a recent block that the answer does not name: kept until the next reorg;
 * - `head`: about the current head (a `latest`-relative read): the tag is resolved against the tracked
 *   head, so the answer is kept until the head moves, and at most `headTtlMs`;
 * - `ttl`: for chains whose finality the cache does not track: kept for `ttlMs`.
 */
export type CacheScope =
  | {
      /** Never changes. */
      readonly scope: 'forever';
    }
  | {
      /** About one block. */
      readonly scope: 'block';
      /** The block's height. */
      readonly block: number;
    }
  | {
      /** About the block the answer names. */
      readonly scope: 'answer';
    }
  | {
      /** About a recent block the answer does not name. */
      readonly scope: 'unfinalized';
    }
  | {
      /** About the current head. */
      readonly scope: 'head';
    }
  | {
      /** Kept for a fixed time. */
      readonly scope: 'ttl';
      /** How long, in ms. */
      readonly ttlMs: number;
    };

/** The cache policy of one method. A method without one is never cached. */
export interface MethodCachePolicy {
  /**
   * How the answer to a call with `params` may be kept; undefined when it must not be (a `pending` tag,
   * for instance). `head` is the tracked chain, undefined when the family tracks none or it is not known yet.
   */
  readonly scope: (params: unknown, head: ChainHead | undefined) => CacheScope | undefined;
  /**
   * For the `answer` scope: the block height a result belongs to (a receipt's `blockNumber`), or
   * undefined when it belongs to none yet (a pending transaction), which is then not kept.
   */
  readonly blockOf?: (result: unknown) => number | undefined;
  /**
   * Whether a result may be kept at all, beyond the rules every answer follows (never an error, never
   * `null`). Default: yes.
   */
  readonly keep?: (result: unknown, params: unknown) => boolean;
}

/** A family's cache declarations: a policy per method, and how to read its chain's head. */
export interface FamilyCachePolicies {
  /** The family's name, as networks reference it. */
  readonly family: string;
  /** Policies by method name. */
  readonly methods: Readonly<Record<string, MethodCachePolicy>>;
  /**
   * Reads the network's head and finalized height (uncharged lookups through `network.rpc`). Families
   * without one get no `block`, `answer`, `unfinalized` or `head` caching, only `forever` and `ttl`.
   */
  readonly readHead?: (network: NetworkRuntime) => Promise<ChainHead>;
  /**
   * The hash of the canonical block at `height`, or undefined when there is none: asked when a new head
   * skipped heights, to check that the last head seen is still part of the chain.
   */
  readonly readBlockHash?: (network: NetworkRuntime, height: number) => Promise<string | undefined>;
}

/** Injection token under which family plugins register their {@link FamilyCachePolicies} (a multi-provider). */
export const CachePoliciesToken = Symbol.for('tollgate.cache.Policies') as InjectionToken<FamilyCachePolicies>;
