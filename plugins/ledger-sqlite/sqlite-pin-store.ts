import type { PinAddResult, PinRecord, PinStore } from '../../core/plugin-api.js';
import type { SqliteDatabase, SqliteStatement, SqliteTransaction } from './database.js';

// Its own table, made on first open, as the filters' is: pins live beside the ledger, outside its migrations.
const SCHEMA = `
CREATE TABLE IF NOT EXISTS pins (
  key_id TEXT NOT NULL,
  cid TEXT NOT NULL,
  name TEXT,
  bytes INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (key_id, cid)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS pins_by_cid ON pins (cid, key_id)`;

interface PinRow {
  key_id: string;
  cid: string;
  name: string | null;
  bytes: number;
  created_at: number;
}

function recordOf(row: PinRow): PinRecord {
  return { keyId: row.key_id, cid: row.cid, ...(row.name === null ? {} : { name: row.name }), bytes: row.bytes, createdAt: row.created_at };
}

/**
 * The {@link PinStore} in the SQLite database, shared by the gateway's workers on one machine. An add is
 * one immediate transaction (the total read and the pin written under the write lock), so two workers
 * never both spend a key's last stored bytes.
 */
export class SqlitePinStore implements PinStore {
  readonly #total: SqliteStatement<[string], { total: number }>;
  readonly #select: SqliteStatement<[string, string], PinRow>;
  readonly #list: SqliteStatement<[string], PinRow>;
  readonly #insert: SqliteStatement<[string, string, string | null, number, number]>;
  readonly #delete: SqliteStatement<[string, string]>;
  readonly #others: SqliteStatement<[string, string], { n: number }>;
  readonly #add: SqliteTransaction<[pin: PinRecord, limitBytes: number | undefined], PinAddResult>;
  readonly #remove: SqliteTransaction<[keyId: string, cid: string], PinRecord | undefined>;

  constructor(db: SqliteDatabase) {
    db.exec(SCHEMA);
    this.#total = db.prepare('SELECT COALESCE(SUM(bytes), 0) AS total FROM pins WHERE key_id = ?');
    this.#select = db.prepare('SELECT key_id, cid, name, bytes, created_at FROM pins WHERE key_id = ? AND cid = ?');
    this.#list = db.prepare('SELECT key_id, cid, name, bytes, created_at FROM pins WHERE key_id = ? ORDER BY created_at, cid');
    this.#insert = db.prepare('INSERT INTO pins (key_id, cid, name, bytes, created_at) VALUES (?, ?, ?, ?, ?)');
    this.#delete = db.prepare('DELETE FROM pins WHERE key_id = ? AND cid = ?');
    this.#others = db.prepare('SELECT COUNT(*) AS n FROM (SELECT 1 FROM pins WHERE cid = ? AND key_id <> ? LIMIT 1)');
    this.#add = db.transaction((pin: PinRecord, limitBytes: number | undefined): PinAddResult => {
      const total = this.#total.get(pin.keyId)!.total;
      if (this.#select.get(pin.keyId, pin.cid) !== undefined) return { ok: true, added: false, storedBytes: total };
      if (limitBytes !== undefined && total + pin.bytes > limitBytes) return { ok: false, storedBytes: total };
      this.#insert.run(pin.keyId, pin.cid, pin.name ?? null, pin.bytes, pin.createdAt);
      return { ok: true, added: true, storedBytes: total + pin.bytes };
    });
    this.#remove = db.transaction((keyId: string, cid: string) => {
      const row = this.#select.get(keyId, cid);
      if (row === undefined) return undefined;
      this.#delete.run(keyId, cid);
      return recordOf(row);
    });
  }

  /** See {@link PinStore.add}. */
  add(pin: PinRecord, limitBytes: number | undefined): PinAddResult {
    return this.#add.immediate(pin, limitBytes);
  }

  /** See {@link PinStore.remove}. */
  remove(keyId: string, cid: string): PinRecord | undefined {
    return this.#remove.immediate(keyId, cid);
  }

  /** See {@link PinStore.get}. */
  get(keyId: string, cid: string): PinRecord | undefined {
    const row = this.#select.get(keyId, cid);
    return row === undefined ? undefined : recordOf(row);
  }

  /** See {@link PinStore.list}. */
  list(keyId: string): PinRecord[] {
    return this.#list.all(keyId).map(recordOf);
  }

  /** See {@link PinStore.pinnedByOthers}. */
  pinnedByOthers(keyId: string, cid: string): boolean {
    return this.#others.get(cid, keyId)!.n > 0;
  }

  /** See {@link PinStore.storedBytes}. */
  storedBytes(keyId: string): number {
    return this.#total.get(keyId)!.total;
  }
}
