import { pinIdOf, type PinAddResult, type PinRecord, type PinSettlement, type PinSettleResult, type PinStatusName, type PinStore } from '../../core/store-api.js';
import type { SqliteDatabase, SqliteStatement, SqliteTransaction } from './database.js';

// Its own table, made on first open, as the filters' is: pins live beside the ledger, outside its
// migrations. One row per pin, named by its pin id (a pin request's id, or the CID of the file API's
// pin), so a key may hold one CID through several pin requests.
const SCHEMA = `
CREATE TABLE IF NOT EXISTS key_pins (
  key_id TEXT NOT NULL,
  pin_id TEXT NOT NULL,
  cid TEXT NOT NULL,
  name TEXT,
  bytes INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  request_id TEXT,
  status TEXT,
  details TEXT,
  meta TEXT,
  origins TEXT,
  PRIMARY KEY (key_id, pin_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS key_pins_by_cid ON key_pins (cid, key_id)`;

/** The columns of the table of earlier versions (`pins`, one row per key and CID) that it may lack. */
const REQUEST_COLUMNS = ['request_id TEXT', 'status TEXT', 'details TEXT', 'meta TEXT', 'origins TEXT'] as const;

/**
 * Moves the pins of an earlier version's `pins` table (one per key and CID, keyed so) into `key_pins`,
 * in one immediate transaction, so two workers opening the database at once move them once.
 */
function migrateOldTable(db: SqliteDatabase): void {
  const exists = (): boolean => db.prepare<[], { n: number }>("SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'pins'").get()!.n > 0;
  if (!exists()) return;
  db.transaction(() => {
    if (!exists()) return;
    const present = new Set(db.prepare<[], { name: string }>('PRAGMA table_info(pins)').all().map((c) => c.name));
    const column = (definition: string): string => {
      const name = definition.split(' ')[0]!;
      return present.has(name) ? name : 'NULL';
    };
    const [requestId, status, details, meta, origins] = REQUEST_COLUMNS.map(column);
    db.exec(`INSERT OR IGNORE INTO key_pins (key_id, pin_id, cid, name, bytes, created_at, request_id, status, details, meta, origins)
      SELECT key_id, COALESCE(${requestId}, cid), cid, name, bytes, created_at, ${requestId}, ${status}, ${details}, ${meta}, ${origins} FROM pins`);
    db.exec('DROP TABLE pins');
  }).immediate();
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
 * The {@link PinStore} in the SQLite database, shared by the gateway's workers on one machine. An add, a
 * removal and a settlement are each one immediate transaction (the total read and the pin written under
 * the write lock), so two workers never both spend a key's last stored bytes, nor both move one pin.
 */
export class SqlitePinStore implements PinStore {
  readonly #total: SqliteStatement<[string], { total: number }>;
  readonly #weight: SqliteStatement<[string, string, string], { weight: number }>;
  readonly #select: SqliteStatement<[string, string], PinRow>;
  readonly #ofCid: SqliteStatement<[string, string], PinRow>;
  readonly #list: SqliteStatement<[string], PinRow>;
  readonly #insert: SqliteStatement<[string, string, string, string | null, number, number, string | null, string | null, string | null, string | null, string | null]>;
  readonly #update: SqliteStatement<[number, string, string | null, string, string]>;
  readonly #settle: SqliteTransaction<[keyId: string, pinId: string, settlement: PinSettlement, limitBytes: number | undefined], PinSettleResult>;
  readonly #delete: SqliteStatement<[string, string]>;
  readonly #others: SqliteStatement<[string, string], { n: number }>;
  readonly #add: SqliteTransaction<[pin: PinRecord, limitBytes: number | undefined], PinAddResult>;
  readonly #remove: SqliteTransaction<[keyId: string, pinId: string], PinRecord | undefined>;

  constructor(db: SqliteDatabase) {
    db.exec(SCHEMA);
    migrateOldTable(db);
    // Each CID once, at its heaviest pin: the node stores it once however many pins hold it.
    this.#total = db.prepare('SELECT COALESCE(SUM(weight), 0) AS total FROM (SELECT MAX(bytes) AS weight FROM key_pins WHERE key_id = ? GROUP BY cid)');
    this.#weight = db.prepare('SELECT COALESCE(MAX(bytes), 0) AS weight FROM key_pins WHERE key_id = ? AND cid = ? AND pin_id <> ?');
    this.#select = db.prepare(`SELECT ${COLUMNS} FROM key_pins WHERE key_id = ? AND pin_id = ?`);
    this.#ofCid = db.prepare(`SELECT ${COLUMNS} FROM key_pins WHERE key_id = ? AND cid = ? ORDER BY created_at, pin_id`);
    this.#list = db.prepare(`SELECT ${COLUMNS} FROM key_pins WHERE key_id = ? ORDER BY created_at, pin_id`);
    this.#insert = db.prepare(`INSERT INTO key_pins (pin_id, ${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.#update = db.prepare('UPDATE key_pins SET bytes = ?, status = ?, details = ? WHERE key_id = ? AND pin_id = ?');
    this.#delete = db.prepare('DELETE FROM key_pins WHERE key_id = ? AND pin_id = ?');
    // A failed pin request holds nothing on the node.
    this.#others = db.prepare("SELECT COUNT(*) AS n FROM (SELECT 1 FROM key_pins WHERE cid = ? AND key_id <> ? AND (status IS NULL OR status <> 'failed') LIMIT 1)");
    this.#add = db.transaction((pin: PinRecord, limitBytes: number | undefined): PinAddResult => {
      const total = this.#total.get(pin.keyId)!.total;
      const id = pinIdOf(pin);
      if (this.#select.get(pin.keyId, id) !== undefined) return { ok: true, added: false, storedBytes: total };
      const grows = Math.max(0, pin.bytes - this.#weight.get(pin.keyId, pin.cid, id)!.weight);
      if (limitBytes !== undefined && total + grows > limitBytes) return { ok: false, storedBytes: total };
      this.#insert.run(id, pin.keyId, pin.cid, pin.name ?? null, pin.bytes, pin.createdAt, pin.requestId ?? null, pin.status ?? null, pin.statusDetails ?? null, pin.meta === undefined ? null : JSON.stringify(pin.meta), pin.origins === undefined ? null : JSON.stringify(pin.origins));
      return { ok: true, added: true, storedBytes: total + grows };
    });
    this.#settle = db.transaction((keyId: string, pinId: string, settlement: PinSettlement, limitBytes: number | undefined): PinSettleResult => {
      const total = this.#total.get(keyId)!.total;
      const row = this.#select.get(keyId, pinId);
      if (row === undefined) return { ok: false, storedBytes: total, missing: true };
      if (settlement.from !== undefined && !settlement.from.includes((row.status ?? 'pinned') as PinStatusName)) return { ok: false, storedBytes: total, moved: true };
      const bytes = settlement.bytes ?? row.bytes;
      const others = this.#weight.get(keyId, row.cid, pinId)!.weight;
      const grows = Math.max(others, bytes) - Math.max(others, row.bytes);
      if (limitBytes !== undefined && grows > 0 && total + grows > limitBytes) return { ok: false, storedBytes: total };
      this.#update.run(bytes, settlement.status, settlement.statusDetails ?? null, keyId, pinId);
      return { ok: true, storedBytes: total + grows };
    });
    this.#remove = db.transaction((keyId: string, pinId: string) => {
      const row = this.#select.get(keyId, pinId);
      if (row === undefined) return undefined;
      this.#delete.run(keyId, pinId);
      return recordOf(row);
    });
  }

  /** See {@link PinStore.add}. */
  add(pin: PinRecord, limitBytes: number | undefined): PinAddResult {
    return this.#add.immediate(pin, limitBytes);
  }

  /** See {@link PinStore.remove}. */
  remove(keyId: string, pinId: string): PinRecord | undefined {
    return this.#remove.immediate(keyId, pinId);
  }

  /** See {@link PinStore.get}. */
  get(keyId: string, pinId: string): PinRecord | undefined {
    const row = this.#select.get(keyId, pinId);
    return row === undefined ? undefined : recordOf(row);
  }

  /** See {@link PinStore.pinsOf}. */
  pinsOf(keyId: string, cid: string): PinRecord[] {
    return this.#ofCid.all(keyId, cid).map(recordOf);
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

  /** See {@link PinStore.settle}. */
  settle(keyId: string, pinId: string, settlement: PinSettlement, limitBytes: number | undefined): PinSettleResult {
    return this.#settle.immediate(keyId, pinId, settlement, limitBytes);
  }

}
