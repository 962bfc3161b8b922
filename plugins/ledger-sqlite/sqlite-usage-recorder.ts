import { PendingUsage, UtcDayCache, daysBetween, type UsageEvent, type UsageRecorder, type UsageRow, type UsageTotals } from '../../core/store-api.js';
import type { SqliteDatabase, SqliteStatement } from './database.js';
import type { GroupCommit } from './group-commit.js';

/** Longest method name kept as is; longer ones (never a real method) are cut, so a client cannot bloat the table. */
export const MAX_METHOD_LENGTH = 64;

/** A usage row as read back: the cache counts are columns of their own. */
type MethodRow = UsageTotals & { method: string; cacheHits: number; cacheMisses: number };

/** A row of one key and day, per network and method. */
type NetworkRow = MethodRow & { network: string };

/**
 * Usage per key, UTC day, network and method in SQLite: calls, credits, bytes, failed calls and the response
 * cache's hits and misses, added up by one
 * upsert per key, day, network and method in the group transaction of its event-loop turns ({@link GroupCommit}). Usage may
 * therefore trail the balances by those two turns when the gateway is killed; balances never trail.
 */
export class SqliteUsageRecorder implements UsageRecorder {
  readonly #writer: GroupCommit;
  readonly #days = new UtcDayCache();
  readonly #add: SqliteStatement<[string, string, string, string, number, number, number, number, number, number]>;
  readonly #read: SqliteStatement<[string, string], MethodRow>;
  readonly #rows: SqliteStatement<[string, string], NetworkRow>;
  readonly #pending = new PendingUsage();

  constructor(db: SqliteDatabase, writer: GroupCommit) {
    this.#writer = writer;
    this.#add = db.prepare<[string, string, string, string, number, number, number, number, number, number]>(
      `INSERT INTO usage (key_id, day, network, method, calls, credits, bytes, failed, cache_hits, cache_misses) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (key_id, day, network, method) DO UPDATE SET calls = calls + excluded.calls, credits = credits + excluded.credits,
         bytes = bytes + excluded.bytes, failed = failed + excluded.failed,
         cache_hits = cache_hits + excluded.cache_hits, cache_misses = cache_misses + excluded.cache_misses`,
    );
    this.#read = db.prepare<[string, string], MethodRow>(
      `SELECT method, SUM(calls) AS calls, SUM(credits) AS credits, SUM(bytes) AS bytes, SUM(failed) AS failed,
         SUM(cache_hits) AS cacheHits, SUM(cache_misses) AS cacheMisses
       FROM usage WHERE key_id = ? AND day = ? GROUP BY method ORDER BY method`,
    );
    this.#rows = db.prepare<[string, string], NetworkRow>(
      `SELECT network, method, calls, credits, bytes, failed, cache_hits AS cacheHits, cache_misses AS cacheMisses
       FROM usage WHERE key_id = ? AND day = ? ORDER BY network, method`,
    );
  }

  record(event: UsageEvent): void {
    const method = event.method.length > MAX_METHOD_LENGTH ? event.method.slice(0, MAX_METHOD_LENGTH) : event.method;
    if (this.#pending.size === 0) this.#writer.add(this.#drain);
    this.#pending.add(event, this.#days.dayOf(event.at), method);
  }

  /** Writes the totals gathered during this turn: one upsert per key, day, network and method, whatever the number of calls. */
  readonly #drain = (): void => {
    for (const p of this.#pending.take()) this.#add.run(p.keyId, p.day, p.network, p.method, p.calls, p.credits, p.bytes, p.failed, p.cacheHits, p.cacheMisses);
  };

  usage(keyId: string, day: string): Record<string, UsageTotals> {
    return Object.fromEntries(this.#read.all(keyId, day).map(({ method, cacheHits, cacheMisses, ...totals }) => [method, withCacheCounts(totals, cacheHits, cacheMisses)]));
  }

  /** Reads one key and day at a time (the primary key's order), so a long export holds one day of one key at most. */
  async *usageRows(keyIds: readonly string[], from: string, to: string): AsyncGenerator<UsageRow> {
    for (const day of daysBetween(from, to)) {
      for (const keyId of keyIds) {
        for (const { network, method, cacheHits, cacheMisses, ...totals } of this.#rows.all(keyId, day)) {
          yield { day, keyId, network, method, ...withCacheCounts(totals, cacheHits, cacheMisses) };
        }
      }
    }
  }
}

/** The totals with the cache counts a cache made (as the memory recorder reports them: only once there is one). */
function withCacheCounts(totals: UsageTotals, cacheHits: number, cacheMisses: number): UsageTotals {
  const out: UsageTotals = { ...totals };
  if (cacheHits > 0) out.cacheHits = cacheHits;
  if (cacheMisses > 0) out.cacheMisses = cacheMisses;
  return out;
}
