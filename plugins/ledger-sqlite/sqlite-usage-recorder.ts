import { UtcDayCache, type UsageEvent, type UsageRecorder, type UsageTotals } from '../../core/index.js';
import type { SqliteDatabase, SqliteStatement } from './database.js';
import type { GroupCommit } from './group-commit.js';

/** Longest method name kept as is; longer ones (never a real method) are cut, so a client cannot bloat the table. */
export const MAX_METHOD_LENGTH = 64;

/**
 * Usage per key, UTC day and method in SQLite: calls, credits, bytes and failed calls, added up by one
 * upsert per key, day and method in the group transaction of its event-loop turn ({@link GroupCommit}). Usage may
 * therefore trail the balances by that one turn when the gateway is killed; balances never trail.
 */
export class SqliteUsageRecorder implements UsageRecorder {
  readonly #writer: GroupCommit;
  readonly #days = new UtcDayCache();
  readonly #add: SqliteStatement<[string, string, string, number, number, number, number]>;
  readonly #read: SqliteStatement<[string, string], UsageTotals & { method: string }>;
  readonly #pending = new Map<string, UsageTotals & { keyId: string; day: string; method: string }>();

  constructor(db: SqliteDatabase, writer: GroupCommit) {
    this.#writer = writer;
    this.#add = db.prepare<[string, string, string, number, number, number, number]>(
      `INSERT INTO usage (key_id, day, method, calls, credits, bytes, failed) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (key_id, day, method) DO UPDATE SET calls = calls + excluded.calls, credits = credits + excluded.credits,
         bytes = bytes + excluded.bytes, failed = failed + excluded.failed`,
    );
    this.#read = db.prepare<[string, string], UsageTotals & { method: string }>(
      'SELECT method, calls, credits, bytes, failed FROM usage WHERE key_id = ? AND day = ? ORDER BY method',
    );
  }

  record(event: UsageEvent): void {
    const method = event.method.length > MAX_METHOD_LENGTH ? event.method.slice(0, MAX_METHOD_LENGTH) : event.method;
    const day = this.#days.dayOf(event.at);
    const slot = `${event.keyId}\n${day}\n${method}`;
    let pending = this.#pending.get(slot);
    if (pending === undefined) {
      if (this.#pending.size === 0) this.#writer.add(this.#drain);
      pending = { keyId: event.keyId, day, method, calls: 0, credits: 0, bytes: 0, failed: 0 };
      this.#pending.set(slot, pending);
    }
    pending.calls += event.calls;
    pending.credits += event.credits;
    pending.bytes += event.bytes;
    if (event.failed) pending.failed += event.calls;
  }

  /** Writes the totals gathered during this turn: one upsert per key, day and method, whatever the number of calls. */
  readonly #drain = (): void => {
    for (const p of this.#pending.values()) this.#add.run(p.keyId, p.day, p.method, p.calls, p.credits, p.bytes, p.failed);
    this.#pending.clear();
  };

  usage(keyId: string, day: string): Record<string, UsageTotals> {
    return Object.fromEntries(this.#read.all(keyId, day).map(({ method, ...totals }) => [method, totals]));
  }
}
