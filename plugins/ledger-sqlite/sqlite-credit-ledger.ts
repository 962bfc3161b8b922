import { newDebitId, nextUtcMidnight, utcDay, type Balance, type CreditLedger, type DebitReceipt, type DebitResult } from '../../core/index.js';
import type { SqliteDatabase, SqliteStatement } from './database.js';
import type { GroupCommit } from './group-commit.js';

const DAY_MS = 86_400_000;

/**
 * Daily balances in SQLite. A debit is one statement (an upsert guarded by the limit), and it resolves
 * only once its transaction is committed, so a call is dispatched only after its debit is on disk:
 * killing the gateway loses nothing that was charged. Debits of one event-loop turn share a transaction
 * ({@link GroupCommit}); between processes sharing the file, SQLite's write lock keeps them exact.
 *
 * A debit is never retried (a transaction that fails rolls back whole, and its caller hears so), so it
 * is applied at most once by construction. A refund records its debit id in the same transaction that
 * gives the credits back, and a second refund of that id changes nothing.
 */
export class SqliteCreditLedger implements CreditLedger {
  readonly #writer: GroupCommit;
  readonly #take: SqliteStatement<[string, string, number, number], number>;
  readonly #used: SqliteStatement<[string, string], number>;
  readonly #giveBack: SqliteStatement<[number, string, string]>;
  readonly #markRefunded: SqliteStatement<[string, string]>;
  readonly #prune: (before: string) => void;
  readonly #retainDays: number;
  #today = '';
  #todayEnds = 0;

  constructor(db: SqliteDatabase, writer: GroupCommit, retainDays: number) {
    this.#writer = writer;
    this.#retainDays = retainDays;
    this.#take = db
      .prepare<[string, string, number, number], number>(
        `INSERT INTO balances (key_id, day, used) VALUES (?, ?, ?)
         ON CONFLICT (key_id, day) DO UPDATE SET used = used + excluded.used WHERE used + excluded.used <= ?
         RETURNING used`,
      )
      .pluck();
    this.#used = db.prepare<[string, string], number>('SELECT used FROM balances WHERE key_id = ? AND day = ?').pluck();
    this.#giveBack = db.prepare<[number, string, string]>('UPDATE balances SET used = max(0, used - ?) WHERE key_id = ? AND day = ?');
    this.#markRefunded = db.prepare<[string, string]>('INSERT OR IGNORE INTO refunds (id, day) VALUES (?, ?)');
    const pruneRefunds = db.prepare<[string]>('DELETE FROM refunds WHERE day < ?');
    const pruneBalances = db.prepare<[string]>('DELETE FROM balances WHERE day < ?');
    const pruneUsage = db.prepare<[string]>('DELETE FROM usage WHERE day < ?');
    this.#prune = (before) => {
      pruneBalances.run(before);
      pruneUsage.run(before);
      pruneRefunds.run(before);
    };
  }

  debit(keyId: string, credits: number, dailyLimit: number, now: Date): Promise<DebitResult> {
    const day = this.#roll(now);
    return this.#writer.run((): DebitResult => {
      const used = credits <= dailyLimit ? this.#take.get(keyId, day, credits, dailyLimit) : undefined;
      if (used !== undefined) return { ok: true, receipt: { id: newDebitId(), keyId, day, credits }, remaining: dailyLimit - used };
      const before = this.#used.get(keyId, day) ?? 0;
      return { ok: false, remaining: Math.max(0, dailyLimit - before), resetsAt: nextUtcMidnight(now) };
    });
  }

  refund(receipt: DebitReceipt): Promise<void> | void {
    return this.#writer.run(() => {
      if (this.#markRefunded.run(receipt.id, receipt.day).changes === 1) this.#giveBack.run(receipt.credits, receipt.keyId, receipt.day);
    });
  }

  balance(keyId: string, dailyLimit: number, now: Date): Balance {
    const day = utcDay(now);
    const used = this.#used.get(keyId, day) ?? 0;
    return { day, used, remaining: Math.max(0, dailyLimit - used), resetsAt: nextUtcMidnight(now) };
  }

  /** The day of `now`; on the first call of a new UTC day, deletes days older than the retention. */
  #roll(now: Date): string {
    const ms = now.getTime();
    if (ms >= this.#todayEnds || ms < this.#todayEnds - DAY_MS) {
      const day = utcDay(now);
      this.#today = day;
      this.#todayEnds = nextUtcMidnight(now).getTime();
      const before = utcDay(new Date(ms - this.#retainDays * DAY_MS));
      this.#writer.add(() => this.#prune(before));
    }
    return this.#today;
  }
}
