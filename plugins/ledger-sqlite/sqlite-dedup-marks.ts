import type { DedupMarks } from '../../core/store-api.js';
import type { SqliteDatabase, SqliteStatement } from './database.js';

// Its own table, made on first open: marks are short-lived state, outside the ledger's migrations.
const SCHEMA = `
CREATE TABLE IF NOT EXISTS dedup_marks (
  id TEXT NOT NULL PRIMARY KEY,
  expires_at INTEGER NOT NULL
) WITHOUT ROWID`;

/** Sweep the expired marks once this many were made by this process since its last sweep. */
const SWEEP_EVERY = 1024;

/**
 * The {@link DedupMarks} in the SQLite database, shared by the gateway's workers on one machine: a mark is
 * made by one statement (an insert that replaces only an expired mark), so two workers marking at once
 * make it once; expired marks are deleted now and then.
 */
export class SqliteDedupMarks implements DedupMarks {
  readonly #mark: SqliteStatement<[string, number, number]>;
  readonly #unmark: SqliteStatement<[string]>;
  readonly #sweep: SqliteStatement<[number]>;
  #sinceSweep = 0;

  constructor(db: SqliteDatabase) {
    db.exec(SCHEMA);
    this.#mark = db.prepare('INSERT INTO dedup_marks (id, expires_at) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at WHERE dedup_marks.expires_at <= ?');
    this.#unmark = db.prepare('DELETE FROM dedup_marks WHERE id = ?');
    this.#sweep = db.prepare('DELETE FROM dedup_marks WHERE expires_at <= ?');
  }

  /** See {@link DedupMarks.mark}. */
  mark(id: string, windowMs: number, now: number): boolean {
    if (++this.#sinceSweep >= SWEEP_EVERY) {
      this.#sinceSweep = 0;
      this.#sweep.run(now);
    }
    return this.#mark.run(id, now + windowMs, now).changes === 1;
  }

  /** See {@link DedupMarks.unmark}. */
  unmark(id: string): void {
    this.#unmark.run(id);
  }
}
