import { listLimit, type JournalEntry, type JournalQuery, type PaymentJournal, type PaymentState, type SettledPayment, type SettlingPayment } from './payment-journal.js';

/** What running a statement reports. */
export interface JournalRunResult {
  /** Rows it changed. */
  readonly changes: number;
}

/** The parts of a better-sqlite3 statement the journal uses. */
export interface JournalStatement {
  /** Runs it. */
  run(...params: unknown[]): JournalRunResult;
  /** The first row, if any. */
  get(...params: unknown[]): unknown;
  /** Every row. */
  all(...params: unknown[]): unknown[];
}

/** The parts of a better-sqlite3 connection the journal uses (the SQLite store's `store.db` has them). */
export interface JournalDatabase {
  /** Runs SQL text. */
  exec(sql: string): unknown;
  /** Prepares a statement. */
  prepare(sql: string): JournalStatement;
}

// Its own table, made on first open, beside the store's (as the dedup marks are).
const SCHEMA = `
CREATE TABLE IF NOT EXISTS x402_payments (
  id           TEXT PRIMARY KEY,
  key_id       TEXT NOT NULL,
  plan         TEXT NOT NULL,
  credits      INTEGER NOT NULL,
  payer        TEXT NOT NULL,
  network      TEXT NOT NULL,
  asset        TEXT NOT NULL,
  amount       TEXT NOT NULL,
  pay_to       TEXT NOT NULL,
  state        TEXT NOT NULL CHECK (state IN ('settling', 'settled', 'credited', 'failed')),
  nonce        TEXT,
  valid_before INTEGER,
  payload      TEXT,
  requirements TEXT,
  started_at   INTEGER NOT NULL,
  tx           TEXT,
  settled_at   INTEGER,
  credited_at  INTEGER,
  failure      TEXT
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS x402_payments_unfinished ON x402_payments (started_at) WHERE state IN ('settling', 'settled');
CREATE INDEX IF NOT EXISTS x402_payments_by_key ON x402_payments (key_id, started_at);
CREATE INDEX IF NOT EXISTS x402_payments_by_payer ON x402_payments (lower(payer), started_at);`;

interface Row {
  id: string;
  key_id: string;
  plan: string;
  credits: number;
  payer: string;
  network: string;
  asset: string;
  amount: string;
  pay_to: string;
  state: PaymentState;
  nonce: string | null;
  valid_before: number | null;
  payload: string | null;
  requirements: string | null;
  started_at: number;
  tx: string | null;
  settled_at: number | null;
  credited_at: number | null;
  failure: string | null;
}

function entryOf(row: Row): JournalEntry {
  return {
    id: row.id, keyId: row.key_id, plan: row.plan, credits: row.credits, payer: row.payer, network: row.network, asset: row.asset, amount: row.amount,
    payTo: row.pay_to, state: row.state, nonce: row.nonce ?? undefined, validBefore: row.valid_before ?? undefined,
    payload: row.payload === null ? undefined : JSON.parse(row.payload), requirements: row.requirements === null ? undefined : JSON.parse(row.requirements),
    startedAt: row.started_at, transaction: row.tx ?? undefined, settledAt: row.settled_at ?? undefined, creditedAt: row.credited_at ?? undefined,
    failure: row.failure ?? undefined,
  };
}

/**
 * The table as the journal's first version made it (states `settled` and `credited` only, no
 * `started_at`): its rows move into the new table, in one transaction.
 */
function migrateSettledOnly(db: JournalDatabase): void {
  const columns = (db.prepare("SELECT name FROM pragma_table_info('x402_payments')").all() as Array<{ name: string }>).map((c) => c.name);
  if (columns.length === 0 || columns.includes('started_at')) return;
  db.exec(`BEGIN IMMEDIATE;
ALTER TABLE x402_payments RENAME TO x402_payments_v1;
DROP INDEX IF EXISTS x402_payments_uncredited;
DROP INDEX IF EXISTS x402_payments_by_key;
${SCHEMA}
INSERT INTO x402_payments (id, key_id, plan, credits, payer, network, asset, amount, pay_to, state, started_at, tx, settled_at, credited_at)
  SELECT id, key_id, plan, credits, payer, network, asset, amount, pay_to, state, settled_at, tx, settled_at, credited_at FROM x402_payments_v1;
DROP TABLE x402_payments_v1;
COMMIT;`);
}

const INSERT = `INSERT INTO x402_payments (id, key_id, plan, credits, payer, network, asset, amount, pay_to, state, nonce, valid_before, payload, requirements, started_at, tx, settled_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`;

/**
 * The {@link PaymentJournal} in a SQLite database (the SQLite store's file), shared by the gateway's
 * workers on one machine: a record is one insert that does nothing when the id exists, and each move of
 * state one update conditioned on the state before it, so two workers never both win a step.
 */
export class SqlitePaymentJournal implements PaymentJournal {
  readonly #insert: JournalStatement;
  readonly #settled: JournalStatement;
  readonly #failed: JournalStatement;
  readonly #credited: JournalStatement;
  readonly #get: JournalStatement;
  readonly #unfinished: JournalStatement;
  readonly #uncredited: JournalStatement;
  readonly #byKey: JournalStatement;
  readonly #byPayer: JournalStatement;
  readonly #byBoth: JournalStatement;
  readonly #all: JournalStatement;

  constructor(db: JournalDatabase) {
    migrateSettledOnly(db);
    db.exec(SCHEMA);
    this.#insert = db.prepare(INSERT);
    this.#settled = db.prepare(`UPDATE x402_payments SET state = 'settled', tx = ?, settled_at = ?, failure = NULL WHERE id = ? AND state IN ('settling', 'failed')`);
    this.#failed = db.prepare(`UPDATE x402_payments SET state = 'failed', failure = ?, settled_at = ? WHERE id = ? AND state = 'settling'`);
    this.#credited = db.prepare(`UPDATE x402_payments SET state = 'credited', credited_at = ? WHERE id = ? AND state = 'settled'`);
    this.#get = db.prepare('SELECT * FROM x402_payments WHERE id = ?');
    this.#unfinished = db.prepare(`SELECT * FROM x402_payments WHERE state IN ('settling', 'settled') ORDER BY started_at`);
    this.#uncredited = db.prepare(`SELECT * FROM x402_payments WHERE state = 'settled' ORDER BY started_at`);
    this.#byKey = db.prepare('SELECT * FROM x402_payments WHERE key_id = ? ORDER BY started_at DESC LIMIT ?');
    this.#byPayer = db.prepare('SELECT * FROM x402_payments WHERE lower(payer) = ? ORDER BY started_at DESC LIMIT ?');
    this.#byBoth = db.prepare('SELECT * FROM x402_payments WHERE key_id = ? AND lower(payer) = ? ORDER BY started_at DESC LIMIT ?');
    this.#all = db.prepare('SELECT * FROM x402_payments ORDER BY started_at DESC LIMIT ?');
  }

  /** See {@link PaymentJournal.begin}. */
  async begin(p: SettlingPayment): Promise<boolean> {
    return this.#insert.run(
      p.id, p.keyId, p.plan, p.credits, p.payer, p.network, p.asset, p.amount, p.payTo, 'settling', p.nonce, p.validBefore,
      JSON.stringify(p.payload), JSON.stringify(p.requirements), p.startedAt, null, null,
    ).changes === 1;
  }

  /** See {@link PaymentJournal.record}. */
  async record(p: SettledPayment): Promise<boolean> {
    return this.#insert.run(
      p.id, p.keyId, p.plan, p.credits, p.payer, p.network, p.asset, p.amount, p.payTo, 'settled', null, null, null, null, p.settledAt, p.transaction, p.settledAt,
    ).changes === 1;
  }

  /** See {@link PaymentJournal.markSettled}. */
  async markSettled(id: string, transaction: string, at: number): Promise<boolean> {
    return this.#settled.run(transaction, at, id).changes === 1;
  }

  /** See {@link PaymentJournal.markFailed}. */
  async markFailed(id: string, failure: string, at: number): Promise<boolean> {
    return this.#failed.run(failure, at, id).changes === 1;
  }

  /** See {@link PaymentJournal.markCredited}. */
  async markCredited(id: string, at: number): Promise<boolean> {
    return this.#credited.run(at, id).changes === 1;
  }

  /** See {@link PaymentJournal.get}. */
  async get(id: string): Promise<JournalEntry | undefined> {
    const row = this.#get.get(id) as Row | undefined;
    return row === undefined ? undefined : entryOf(row);
  }

  /** See {@link PaymentJournal.unfinished}. */
  async unfinished(): Promise<readonly JournalEntry[]> {
    return (this.#unfinished.all() as Row[]).map(entryOf);
  }

  /** See {@link PaymentJournal.uncredited}. */
  async uncredited(): Promise<readonly JournalEntry[]> {
    return (this.#uncredited.all() as Row[]).map(entryOf);
  }

  /** See {@link PaymentJournal.list}. */
  async list(query: JournalQuery): Promise<readonly JournalEntry[]> {
    const limit = listLimit(query);
    const payer = query.payer?.toLowerCase();
    const rows = query.keyId !== undefined && payer !== undefined ? this.#byBoth.all(query.keyId, payer, limit)
      : query.keyId !== undefined ? this.#byKey.all(query.keyId, limit)
        : payer !== undefined ? this.#byPayer.all(payer, limit)
          : this.#all.all(limit);
    return (rows as Row[]).map(entryOf);
  }
}
