import type { LRUCache } from 'lru-cache';
import { lruCache } from './peers.js';
import type { CacheStore } from './store.js';

/** Bytes a key costs beside its value: the string and the bookkeeping around it. */
const ENTRY_OVERHEAD = 64;

/**
 * A {@link CacheStore} in process memory: least recently used entries go first once the values (with
 * their keys) exceed `maxBytes`, and each entry expires after its TTL. Built on `lru-cache`, which
 * bounds by size and expires per entry without a timer per item.
 */
export class MemoryCacheStore implements CacheStore {
  readonly #entries: LRUCache<string, Uint8Array>;
  readonly #tags = new Map<string, Set<string>>();
  readonly #tagOf = new Map<string, string>();

  constructor(maxBytes: number) {
    this.#entries = new lruCache.LRUCache<string, Uint8Array>({
      maxSize: maxBytes,
      sizeCalculation: (value, key) => value.byteLength + key.length * 2 + ENTRY_OVERHEAD,
      dispose: (_value, key) => this.#untag(key),
    });
  }

  /** Bytes held, as counted against `maxBytes`. */
  get bytes(): number {
    return this.#entries.calculatedSize;
  }

  /** Entries held. */
  get size(): number {
    return this.#entries.size;
  }

  get(key: string): Uint8Array | undefined {
    return this.#entries.get(key);
  }

  set(key: string, value: Uint8Array, ttlMs: number, tag?: string): void {
    this.#entries.set(key, value, { ttl: ttlMs });
    // `set` disposed any previous value (and its tag) first.
    if (tag === undefined || !this.#entries.has(key)) return;
    let keys = this.#tags.get(tag);
    if (keys === undefined) this.#tags.set(tag, (keys = new Set()));
    keys.add(key);
    this.#tagOf.set(key, tag);
  }

  dropTag(tag: string): void {
    const keys = this.#tags.get(tag);
    if (keys === undefined) return;
    this.#tags.delete(tag);
    for (const key of keys) this.#entries.delete(key);
  }

  #untag(key: string): void {
    const tag = this.#tagOf.get(key);
    if (tag === undefined) return;
    this.#tagOf.delete(key);
    this.#tags.get(tag)?.delete(key);
  }
}
