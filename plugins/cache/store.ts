import type { InjectionToken } from 'tsyringe';
import type { MaybePromise } from '../../core/plugin-api.js';

/**
 * Where cached answers live. Values are the bytes of a JSON-RPC `result` (or `error`) member, never a
 * whole response, so each client gets its own id back. A store that fails throws or rejects; the cache
 * then treats the call as a miss, never as an error.
 */
export interface CacheStore {
  /** The value under `key`, or undefined when absent or expired. */
  get(key: string): MaybePromise<Uint8Array | undefined>;
  /** Stores `value` under `key` for `ttlMs`; a `tag` groups entries to drop together (`dropTag`). */
  set(key: string, value: Uint8Array, ttlMs: number, tag?: string): MaybePromise<void>;
  /** Drops every entry stored with `tag` (the unfinalized entries of a network, on a reorg). */
  dropTag(tag: string): MaybePromise<void>;
  /** Opens connections, when the store has any. */
  open?(): Promise<void>;
  /** Releases what the store holds. */
  close?(): Promise<void>;
}

/** Injection token of the {@link CacheStore}; the cache plugin uses a memory store when none is registered. */
export const CacheStoreToken = Symbol.for('tollgate.cache.Store') as InjectionToken<CacheStore>;
