import Database from 'better-sqlite3';
import type { PaidCredits } from '../../plugins/payments/index.js';

/**
 * Bought credits in a SQLite file, one row per payment: a credit survives a `kill -9`, and a second credit
 * of one payment would be a second row (refused by the primary key, as the ledger's paid balance does).
 */
export class SqlitePaidCredits implements PaidCredits {
  readonly #db: Database.Database;

  constructor(path: string) {
    this.#db = new Database(path);
    this.#db.pragma('journal_mode = WAL');
    this.#db.pragma('busy_timeout = 5000');
    this.#db.exec('CREATE TABLE IF NOT EXISTS paid (payment_id TEXT PRIMARY KEY, key_id TEXT NOT NULL, credits INTEGER NOT NULL)');
  }

  /** See {@link PaidCredits.add}. */
  async add(keyId: string, credits: number, paymentId: string): Promise<boolean> {
    return this.#db.prepare('INSERT INTO paid (payment_id, key_id, credits) VALUES (?, ?, ?) ON CONFLICT (payment_id) DO NOTHING').run(paymentId, keyId, credits).changes === 1;
  }

  /** See {@link PaidCredits.balance}. */
  async balance(keyId: string): Promise<number> {
    return Number(this.#db.prepare('SELECT COALESCE(SUM(credits), 0) FROM paid WHERE key_id = ?').pluck().get(keyId));
  }

  /** The payments credited to `keyId`. */
  rows(keyId: string): Array<{ payment_id: string; credits: number }> {
    return this.#db.prepare('SELECT payment_id, credits FROM paid WHERE key_id = ?').all(keyId) as Array<{ payment_id: string; credits: number }>;
  }

  close(): void {
    this.#db.close();
  }
}
