import type { UsageEvent, UsageRow } from '../contracts/usage.js';

/** The totals of one key, UTC day, network and method not yet written by a store, with its latest event's time (ms). */
type PendingRow = UsageRow & { cacheHits: number; cacheMisses: number; at: number };

/**
 * Usage a store has gathered and not yet written, by key, UTC day, network and method: nested maps, so
 * adding a call builds no string key (a call's key id, network and method are looked up as they came).
 * Stores that write usage in batches (the SQLite and Redis stores) add each event here and take the rows
 * when they write.
 */
export class PendingUsage {
  readonly #byKey = new Map<string, Map<string, Map<string, Map<string, PendingRow>>>>();
  #size = 0;

  /** Distinct key, day, network and method rows held. */
  get size(): number {
    return this.#size;
  }

  /**
   * Adds `event` (its method as given: a store cuts a long one first) to the row of its key, `day`,
   * network and method. False, and nothing added, when that row is new and `max` rows are held already.
   */
  add(event: UsageEvent, day: string, method: string, max = Number.POSITIVE_INFINITY): boolean {
    let days = this.#byKey.get(event.keyId);
    if (days === undefined) this.#byKey.set(event.keyId, (days = new Map()));
    let networks = days.get(day);
    if (networks === undefined) days.set(day, (networks = new Map()));
    let methods = networks.get(event.network);
    if (methods === undefined) networks.set(event.network, (methods = new Map()));
    let row = methods.get(method);
    if (row === undefined) {
      if (this.#size >= max) return false;
      row = { keyId: event.keyId, day, network: event.network, method, calls: 0, credits: 0, bytes: 0, failed: 0, cacheHits: 0, cacheMisses: 0, at: event.at };
      methods.set(method, row);
      this.#size++;
    }
    row.calls += event.calls;
    row.credits += event.credits;
    row.bytes += event.bytes;
    if (event.failed) row.failed += event.calls;
    if (event.cache === 'hit') row.cacheHits += event.calls;
    else if (event.cache === 'miss') row.cacheMisses += event.calls;
    if (event.at > row.at) row.at = event.at;
    return true;
  }

  /** Every row held (its totals, and `at`: its latest event's time, ms), which are then forgotten. */
  take(): Array<UsageRow & {
    /** Calls answered from a response cache. */
    cacheHits: number;
    /** Cacheable calls that went upstream. */
    cacheMisses: number;
    /** The latest event's time (ms). */
    at: number;
  }> {
    const rows: PendingRow[] = [];
    for (const days of this.#byKey.values()) {
      for (const networks of days.values()) for (const methods of networks.values()) for (const row of methods.values()) rows.push(row);
    }
    this.#byKey.clear();
    this.#size = 0;
    return rows;
  }
}
