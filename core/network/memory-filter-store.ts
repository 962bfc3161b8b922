import { randomBytes } from 'node:crypto';
import type { FilterLimits, FilterStore, StoredFilter } from '../contracts/filter-store.js';

interface Entry {
  spec: string;
  cursor: string;
  expiresAt: number;
}

/** A new filter id: `0x` and 32 random hex digits, like a node's. */
export function newFilterId(): string {
  return `0x${randomBytes(16).toString('hex')}`;
}

/**
 * The {@link FilterStore} of one process: filters in a map per key, expired ones dropped when the key is
 * next used. The default; a deployment of several workers or instances uses a store plugin's.
 */
export class MemoryFilterStore implements FilterStore {
  readonly #byKey = new Map<string, Map<string, Entry>>();

  #live(keyId: string, now: number): Map<string, Entry> {
    let filters = this.#byKey.get(keyId);
    if (filters === undefined) this.#byKey.set(keyId, (filters = new Map()));
    for (const [id, entry] of filters) if (entry.expiresAt <= now) filters.delete(id);
    return filters;
  }

  /** See {@link FilterStore.create}. */
  create(keyId: string, filter: StoredFilter, limits: FilterLimits, now: number): string | undefined {
    const filters = this.#live(keyId, now);
    if (filters.size >= limits.maxPerKey) return undefined;
    const id = newFilterId();
    filters.set(id, { spec: filter.spec, cursor: filter.cursor, expiresAt: now + limits.idleMs });
    return id;
  }

  /** See {@link FilterStore.touch}. */
  touch(keyId: string, id: string, idleMs: number, now: number): StoredFilter | undefined {
    const entry = this.#live(keyId, now).get(id);
    if (entry === undefined) return undefined;
    entry.expiresAt = now + idleMs;
    return { spec: entry.spec, cursor: entry.cursor };
  }

  /** See {@link FilterStore.advance}. */
  advance(keyId: string, id: string, from: string, to: string, idleMs: number, now: number): boolean {
    const entry = this.#live(keyId, now).get(id);
    if (entry === undefined || entry.cursor !== from) return false;
    entry.cursor = to;
    entry.expiresAt = now + idleMs;
    return true;
  }

  /** See {@link FilterStore.remove}. */
  remove(keyId: string, id: string, now: number): boolean {
    return this.#live(keyId, now).delete(id);
  }
}
