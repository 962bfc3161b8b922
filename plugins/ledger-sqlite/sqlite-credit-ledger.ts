import { newDebitId, nextUtcMidnight, utcDay, type Balance, type CreditLedger, type DebitReceipt, type DebitResult } from '../../core/store-api.js';
import type { SqliteDatabase, SqliteStatement } from './database.js';
import type { GroupCommit } from './group-commit.js';

const DAY_MS = 86_400_000;

/** A debit waiting for its batch's transaction. */
interface PendingDebit {
  readonly keyId: string;
  readonly day: string;
  readonly credits: number;
  readonly dailyLimit: number;
  readonly now: Date;
  readonly resolve: (result: DebitResult) => void;
  readonly reject: (error: unknown) => void;
  result: DebitResult | undefined;
}

/**
 * Daily balances in SQLite. A debit resolves only once its transaction is committed, so a call is
 * dispatched only after its debit is on disk: killing the gateway loses nothing that was charged. Debits
 * of one event-loop turn share a transaction ({@link GroupCommit}), and within it the debits of one key
 * are decided together: one read of the balance, each debit taken in order while the limit allows it,
 * one write of the sum (instead of one guarded upsert per call). The transaction holds SQLite's write
 * lock from its start, so between processes sharing the file the read and the write stay exact.
 *
 * A debit is never retried (a transaction that fails rolls back whole, and its caller hears so), so it
 * is applied at most once by construction. A refund records its debit id in the same transaction that
 * gives the credits back, and a second refund of that id changes nothing.
 */
export class SqliteCreditLedger implements CreditLedger {
  readonly #writer: GroupCommit;
  readonly #add: SqliteStatement<[string, string, number]>;
  readonly #used: SqliteStatement<[string, string], number>;
  readonly #giveBack: SqliteStatement<[number, string, string]>;
  readonly #markRefunded: SqliteStatement<[string, string]>;
  readonly #prune: (before: string) => void;
  readonly #retainDays: number;
  #today = '';
  #todayEnds = 0;
  /** Debits asked for since the last write of this ledger was queued: applied together, in order. */
  #batch: PendingDebit[] | undefined = undefined;

  constructor(db: SqliteDatabase, writer: GroupCommit, retainDays: number) {
    this.#writer = writer;
    this.#retainDays = retainDays;
    this.#add = db.prepare<[string, string, number]>(
      'INSERT INTO balances (key_id, day, used) VALUES (?, ?, ?) ON CONFLICT (key_id, day) DO UPDATE SET used = used + excluded.used',
    );
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
    return new Promise<DebitResult>((resolve, reject) => {
      let batch = this.#batch;
      if (batch === undefined) {
        batch = this.#batch = [];
        const debits = batch;
        this.#writer.run(() => this.#apply(debits)).then(
          () => {
            for (const debit of debits) debit.resolve(debit.result!);
          },
          (error: unknown) => {
            for (const debit of debits) debit.reject(error);
          },
        );
      }
      batch.push({ keyId, day, credits, dailyLimit, now, resolve, reject, result: undefined });
    });
  }

  /**
   * Applies the debits of one batch inside its (immediate, so write-locked) transaction: per key and day,
   * one read of the balance, each debit decided in order against it, and one write of what was taken.
   * A debit is still taken only while the limit allows it, and only once on disk is it answered.
   */
  #apply(debits: PendingDebit[]): void {
    // The batch is closed: debits from now on go to the next one (and the next transaction if this one is running).
    if (this.#batch === debits) this.#batch = undefined;
    const balances = new Map<string, { keyId: string; day: string; before: number; used: number }>();
    for (const debit of debits) {
      const slot = `${debit.keyId}\n${debit.day}`;
      let balance = balances.get(slot);
      if (balance === undefined) {
        const before = this.#used.get(debit.keyId, debit.day) ?? 0;
        balances.set(slot, (balance = { keyId: debit.keyId, day: debit.day, before, used: before }));
      }
      const { credits, dailyLimit } = debit;
      if (balance.used + credits <= dailyLimit) {
        balance.used += credits;
        debit.result = { ok: true, receipt: { id: newDebitId(), keyId: debit.keyId, day: debit.day, credits }, remaining: dailyLimit - balance.used };
      } else {
        debit.result = { ok: false, remaining: Math.max(0, dailyLimit - balance.used), resetsAt: nextUtcMidnight(debit.now) };
      }
    }
    for (const balance of balances.values()) {
      if (balance.used > balance.before) this.#add.run(balance.keyId, balance.day, balance.used - balance.before);
    }
  }

  refund(receipt: DebitReceipt): Promise<void> | void {
    // Debits asked for after this refund are decided after it, as they were asked.
    this.#batch = undefined;
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
      this.#batch = undefined;
      this.#writer.add(() => this.#prune(before));
    }
    return this.#today;
  }
}
