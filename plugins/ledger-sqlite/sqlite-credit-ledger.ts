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
 * Daily balances and paid balances in SQLite (tables `balances` and `paid_balances`). A debit resolves only once its transaction is committed, so a call is
 * dispatched only after its debit is on disk: killing the gateway loses nothing that was charged. Debits
 * of two event-loop turns share a transaction ({@link GroupCommit}), and within it the debits of one key
 * are decided together: one read of the balance, each debit taken in order while the limit allows it,
 * one write of the sum (instead of one guarded upsert per call). The transaction holds SQLite's write
 * lock from its start, so between processes sharing the file the read and the write stay exact.
 *
 * A debit is never retried (a transaction that fails rolls back whole, and its caller hears so), so it
 * is applied at most once by construction. A refund records its debit id in the same transaction that
 * gives the credits back (the day part to its day, the paid part to the paid balance), and a second
 * refund of that id changes nothing. A top-up records its id (table `top_ups`) in the transaction that
 * adds it, likewise.
 *
 * A debit takes from the day first and the rest from the paid balance: within a batch's transaction,
 * each key's paid balance is read once beside its day's balance and written once.
 */
export class SqliteCreditLedger implements CreditLedger {
  readonly #writer: GroupCommit;
  readonly #add: SqliteStatement<[string, string, number]>;
  readonly #used: SqliteStatement<[string, string], number>;
  readonly #giveBack: SqliteStatement<[number, string, string]>;
  readonly #markRefunded: SqliteStatement<[string, string]>;
  readonly #paid: SqliteStatement<[string], number>;
  readonly #addPaid: SqliteStatement<[string, number]>;
  readonly #markTopUp: SqliteStatement<[string, string, number, number]>;
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
    this.#paid = db.prepare<[string], number>('SELECT credits FROM paid_balances WHERE key_id = ?').pluck();
    this.#addPaid = db.prepare<[string, number]>(
      'INSERT INTO paid_balances (key_id, credits) VALUES (?, ?) ON CONFLICT (key_id) DO UPDATE SET credits = max(0, credits + excluded.credits)',
    );
    this.#markTopUp = db.prepare<[string, string, number, number]>('INSERT OR IGNORE INTO top_ups (id, key_id, credits, applied_at) VALUES (?, ?, ?, ?)');
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
    const paid = new Map<string, { before: number; left: number }>();
    for (const debit of debits) {
      const slot = `${debit.keyId}\n${debit.day}`;
      let balance = balances.get(slot);
      if (balance === undefined) {
        const before = this.#used.get(debit.keyId, debit.day) ?? 0;
        balances.set(slot, (balance = { keyId: debit.keyId, day: debit.day, before, used: before }));
      }
      let bought = paid.get(debit.keyId);
      if (bought === undefined) {
        const before = this.#paid.get(debit.keyId) ?? 0;
        paid.set(debit.keyId, (bought = { before, left: before }));
      }
      const { credits, dailyLimit } = debit;
      const dayLeft = Math.max(0, dailyLimit - balance.used);
      const fromDay = Math.min(credits, dayLeft);
      const fromPaid = credits - fromDay;
      if (fromPaid <= bought.left) {
        balance.used += fromDay;
        bought.left -= fromPaid;
        debit.result = {
          ok: true,
          receipt: { id: newDebitId(), keyId: debit.keyId, day: debit.day, credits, paid: fromPaid },
          remaining: dayLeft - fromDay,
          paidRemaining: bought.left,
        };
      } else {
        debit.result = { ok: false, remaining: dayLeft, paidRemaining: bought.left, resetsAt: nextUtcMidnight(debit.now) };
      }
    }
    for (const balance of balances.values()) {
      if (balance.used > balance.before) this.#add.run(balance.keyId, balance.day, balance.used - balance.before);
    }
    for (const [keyId, bought] of paid) {
      if (bought.left < bought.before) this.#addPaid.run(keyId, bought.left - bought.before);
    }
  }

  refund(receipt: DebitReceipt): Promise<void> | void {
    // Debits asked for after this refund are decided after it, as they were asked.
    this.#batch = undefined;
    return this.#writer.run(() => {
      if (this.#markRefunded.run(receipt.id, receipt.day).changes !== 1) return;
      const fromDay = receipt.credits - receipt.paid;
      if (fromDay > 0) this.#giveBack.run(fromDay, receipt.keyId, receipt.day);
      if (receipt.paid > 0) this.#addPaid.run(receipt.keyId, receipt.paid);
    });
  }

  topUp(keyId: string, credits: number, topUpId: string): Promise<boolean> {
    // Debits asked for after this top-up are decided after it, as they were asked.
    this.#batch = undefined;
    return this.#writer.run(() => {
      if (this.#markTopUp.run(topUpId, keyId, credits, Date.now()).changes !== 1) return false;
      this.#addPaid.run(keyId, credits);
      return true;
    });
  }

  balance(keyId: string, dailyLimit: number, now: Date): Balance {
    const day = utcDay(now);
    const used = this.#used.get(keyId, day) ?? 0;
    return { day, used, remaining: Math.max(0, dailyLimit - used), paidRemaining: this.#paid.get(keyId) ?? 0, resetsAt: nextUtcMidnight(now) };
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
