import type { MaybePromise } from '../util/maybe-promise.js';

/**
 * A polling filter as a {@link FilterStore} keeps it. The store does not read either field: the family
 * that serves the filter writes and reads them (its criteria, and how far its delivery went).
 */
export interface StoredFilter {
  /** The filter's kind and criteria, as the family describes them (JSON text). */
  readonly spec: string;
  /** Where delivery stands (the last block whose changes were delivered, say), as the family writes it. */
  readonly cursor: string;
}

/** How many filters a key may hold, and how long one lives without being polled. */
export interface FilterLimits {
  /** Live filters one API key may hold at once. */
  readonly maxPerKey: number;
  /** A filter not polled for this long expires, in ms. */
  readonly idleMs: number;
}

/**
 * The filters the gateway serves itself (polling filters that a node would keep in its own memory),
 * kept where every worker and instance of a deployment sees them, so any of them answers a poll, across
 * node failover, without a gap or a duplicate. Filters belong to an API key: another key's id is not
 * found. Every method takes the time as `now` (ms since epoch, from the gateway's clock).
 *
 * The core keeps them in memory (one process); store plugins share them (SQLite between the workers of
 * one machine, Redis between instances).
 */
export interface FilterStore {
  /**
   * Stores a new filter of `keyId` and returns its id (`0x` and 32 hex digits), or undefined when the key
   * already holds `limits.maxPerKey` live filters.
   */
  create(keyId: string, filter: StoredFilter, limits: FilterLimits, now: number): MaybePromise<string | undefined>;
  /** The live filter `id` of `keyId`, its idle time restarted; undefined when there is none (never made, removed, expired). */
  touch(keyId: string, id: string, idleMs: number, now: number): MaybePromise<StoredFilter | undefined>;
  /**
   * Moves the filter's cursor from `from` to `to` if it is still `from`, restarting its idle time; false
   * when it moved meanwhile (another instance answered a poll of the same filter) or the filter is gone.
   * This compare-and-set is what keeps two polls from delivering the same changes twice.
   */
  advance(keyId: string, id: string, from: string, to: string, idleMs: number, now: number): MaybePromise<boolean>;
  /** Removes the filter; true when it existed. */
  remove(keyId: string, id: string, now: number): MaybePromise<boolean>;
}
