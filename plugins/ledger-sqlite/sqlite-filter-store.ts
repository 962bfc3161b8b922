import { newFilterId, type FilterLimits, type FilterStore, type StoredFilter } from '../../core/store-api.js';
import type { SqliteDatabase, SqliteStatement, SqliteTransaction } from './database.js';

// Its own table, made on first open: filters are short-lived state, outside the ledger's migrations.
const SCHEMA = `
CREATE TABLE IF NOT EXISTS filters (
  key_id TEXT NOT NULL,
  id TEXT NOT NULL,
  spec TEXT NOT NULL,
  cursor TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (key_id, id)
) WITHOUT ROWID`;

/**
 * The {@link FilterStore} in the SQLite database, shared by the gateway's workers on one machine. Each
 * change is one statement or one immediate transaction, so two workers answering polls of the same
 * filter never both move its cursor; expired filters are deleted when their key next makes one.
 */
export class SqliteFilterStore implements FilterStore {
  readonly #count: SqliteStatement<[string, number], { n: number }>;
  readonly #purge: SqliteStatement<[string, number]>;
  readonly #insert: SqliteStatement<[string, string, string, string, number]>;
  readonly #select: SqliteStatement<[string, string, number], { spec: string; cursor: string }>;
  readonly #extend: SqliteStatement<[number, string, string]>;
  readonly #advance: SqliteStatement<[string, number, string, string, string, number]>;
  readonly #delete: SqliteStatement<[string, string, number]>;
  readonly #create: SqliteTransaction<[keyId: string, filter: StoredFilter, limits: FilterLimits, now: number], string | undefined>;

  constructor(db: SqliteDatabase) {
    db.exec(SCHEMA);
    this.#count = db.prepare('SELECT COUNT(*) AS n FROM filters WHERE key_id = ? AND expires_at > ?');
    this.#purge = db.prepare('DELETE FROM filters WHERE key_id = ? AND expires_at <= ?');
    this.#insert = db.prepare('INSERT INTO filters (key_id, id, spec, cursor, expires_at) VALUES (?, ?, ?, ?, ?)');
    this.#select = db.prepare('SELECT spec, cursor FROM filters WHERE key_id = ? AND id = ? AND expires_at > ?');
    this.#extend = db.prepare('UPDATE filters SET expires_at = ? WHERE key_id = ? AND id = ?');
    this.#advance = db.prepare('UPDATE filters SET cursor = ?, expires_at = ? WHERE key_id = ? AND id = ? AND cursor = ? AND expires_at > ?');
    this.#delete = db.prepare('DELETE FROM filters WHERE key_id = ? AND id = ? AND expires_at > ?');
    this.#create = db.transaction((keyId: string, filter: StoredFilter, limits: FilterLimits, now: number) => {
      this.#purge.run(keyId, now);
      if (this.#count.get(keyId, now)!.n >= limits.maxPerKey) return undefined;
      const id = newFilterId();
      this.#insert.run(keyId, id, filter.spec, filter.cursor, now + limits.idleMs);
      return id;
    });
  }

  /** See {@link FilterStore.create}. */
  create(keyId: string, filter: StoredFilter, limits: FilterLimits, now: number): string | undefined {
    return this.#create.immediate(keyId, filter, limits, now);
  }

  /** See {@link FilterStore.touch}. */
  touch(keyId: string, id: string, idleMs: number, now: number): StoredFilter | undefined {
    const row = this.#select.get(keyId, id, now);
    if (row === undefined) return undefined;
    this.#extend.run(now + idleMs, keyId, id);
    return { spec: row.spec, cursor: row.cursor };
  }

  /** See {@link FilterStore.advance}. */
  advance(keyId: string, id: string, from: string, to: string, idleMs: number, now: number): boolean {
    return this.#advance.run(to, now + idleMs, keyId, id, from, now).changes === 1;
  }

  /** See {@link FilterStore.remove}. */
  remove(keyId: string, id: string, now: number): boolean {
    return this.#delete.run(keyId, id, now).changes === 1;
  }
}
