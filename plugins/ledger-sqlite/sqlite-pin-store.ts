import type { PinAddResult, PinRecord, PinSettlement, PinSettleResult, PinStatusName, PinStore } from '../../core/plugin-api.js';
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

/**
 * The Pinning Service API's columns, added to a table made without them: its request id, the pin's
 * state and why it failed, and the client's `meta` and `origins` (JSON).
 */
const REQUEST_COLUMNS = ['request_id TEXT', 'status TEXT', 'details TEXT', 'meta TEXT', 'origins TEXT'] as const;
const REQUEST_INDEX = 'CREATE INDEX IF NOT EXISTS pins_by_request ON pins (key_id, request_id) WHERE request_id IS NOT NULL';

function addRequestColumns(db: SqliteDatabase): void {
  const present = new Set(db.prepare<[], { name: string }>('PRAGMA table_info(pins)').all().map((c) => c.name));
  for (const column of REQUEST_COLUMNS) {
    if (present.has(column.split(' ')[0]!)) continue;
    try {
      db.exec(`ALTER TABLE pins ADD COLUMN ${column}`);
    } catch (error) {
      // Another connection (a worker starting at the same time) added it first.
      if (!/duplicate column/i.test((error as Error).message)) throw error;
    }
  }
  db.exec(REQUEST_INDEX);
}

const COLUMNS = 'key_id, cid, name, bytes, created_at, request_id, status, details, meta, origins';

interface PinRow {
  key_id: string;
  cid: string;
  name: string | null;
  bytes: number;
  created_at: number;
  request_id: string | null;
  status: string | null;
  details: string | null;
  meta: string | null;
  origins: string | null;
}

function recordOf(row: PinRow): PinRecord {
  return {
    keyId: row.key_id,
    cid: row.cid,
    ...(row.name === null ? {} : { name: row.name }),
    bytes: row.bytes,
    createdAt: row.created_at,
    ...(row.request_id === null ? {} : { requestId: row.request_id }),
    ...(row.status === null ? {} : { status: row.status as PinStatusName }),
    ...(row.details === null ? {} : { statusDetails: row.details }),
    ...(row.meta === null ? {} : { meta: JSON.parse(row.meta) as Record<string, string> }),
    ...(row.origins === null ? {} : { origins: JSON.parse(row.origins) as string[] }),
  };
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
  readonly #insert: SqliteStatement<[string, string, string | null, number, number, string | null, string | null, string | null, string | null, string | null]>;
  readonly #byRequest: SqliteStatement<[string, string], PinRow>;
  readonly #update: SqliteStatement<[number, string, string | null, string, string]>;
  readonly #settle: SqliteTransaction<[keyId: string, cid: string, settlement: PinSettlement, limitBytes: number | undefined], PinSettleResult>;
  readonly #delete: SqliteStatement<[string, string]>;
  readonly #others: SqliteStatement<[string, string], { n: number }>;
  readonly #add: SqliteTransaction<[pin: PinRecord, limitBytes: number | undefined], PinAddResult>;
  readonly #remove: SqliteTransaction<[keyId: string, cid: string], PinRecord | undefined>;

  constructor(db: SqliteDatabase) {
    db.exec(SCHEMA);
    addRequestColumns(db);
    this.#total = db.prepare('SELECT COALESCE(SUM(bytes), 0) AS total FROM pins WHERE key_id = ?');
    this.#select = db.prepare(`SELECT ${COLUMNS} FROM pins WHERE key_id = ? AND cid = ?`);
    this.#list = db.prepare(`SELECT ${COLUMNS} FROM pins WHERE key_id = ? ORDER BY created_at, cid`);
    this.#insert = db.prepare(`INSERT INTO pins (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.#byRequest = db.prepare(`SELECT ${COLUMNS} FROM pins WHERE key_id = ? AND request_id = ?`);
    this.#update = db.prepare('UPDATE pins SET bytes = ?, status = ?, details = ? WHERE key_id = ? AND cid = ?');
    this.#delete = db.prepare('DELETE FROM pins WHERE key_id = ? AND cid = ?');
    // A failed pin request holds nothing on the node.
    this.#others = db.prepare("SELECT COUNT(*) AS n FROM (SELECT 1 FROM pins WHERE cid = ? AND key_id <> ? AND (status IS NULL OR status <> 'failed') LIMIT 1)");
    this.#add = db.transaction((pin: PinRecord, limitBytes: number | undefined): PinAddResult => {
      const total = this.#total.get(pin.keyId)!.total;
      if (this.#select.get(pin.keyId, pin.cid) !== undefined) return { ok: true, added: false, storedBytes: total };
      if (limitBytes !== undefined && total + pin.bytes > limitBytes) return { ok: false, storedBytes: total };
      this.#insert.run(pin.keyId, pin.cid, pin.name ?? null, pin.bytes, pin.createdAt, pin.requestId ?? null, pin.status ?? null, pin.statusDetails ?? null, pin.meta === undefined ? null : JSON.stringify(pin.meta), pin.origins === undefined ? null : JSON.stringify(pin.origins));
      return { ok: true, added: true, storedBytes: total + pin.bytes };
    });
    this.#settle = db.transaction((keyId: string, cid: string, settlement: PinSettlement, limitBytes: number | undefined): PinSettleResult => {
      const total = this.#total.get(keyId)!.total;
      const row = this.#select.get(keyId, cid);
      if (row === undefined) return { ok: false, storedBytes: total, missing: true };
      const bytes = settlement.bytes ?? row.bytes;
      if (limitBytes !== undefined && bytes > row.bytes && total - row.bytes + bytes > limitBytes) return { ok: false, storedBytes: total };
      this.#update.run(bytes, settlement.status, settlement.statusDetails ?? null, keyId, cid);
      return { ok: true, storedBytes: total - row.bytes + bytes };
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

  /** See {@link PinStore.byRequest}. */
  byRequest(keyId: string, requestId: string): PinRecord | undefined {
    const row = this.#byRequest.get(keyId, requestId);
    return row === undefined ? undefined : recordOf(row);
  }

  /** See {@link PinStore.settle}. */
  settle(keyId: string, cid: string, settlement: PinSettlement, limitBytes: number | undefined): PinSettleResult {
    return this.#settle.immediate(keyId, cid, settlement, limitBytes);
  }
}
