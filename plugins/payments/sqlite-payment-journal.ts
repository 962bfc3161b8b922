import type { JournalEntry, PaymentJournal, PaymentState, SettledPayment } from './payment-journal.js';

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
  id          TEXT PRIMARY KEY,
  key_id      TEXT NOT NULL,
  plan        TEXT NOT NULL,
  credits     INTEGER NOT NULL,
  payer       TEXT NOT NULL,
  network     TEXT NOT NULL,
  asset       TEXT NOT NULL,
  amount      TEXT NOT NULL,
  pay_to      TEXT NOT NULL,
  tx          TEXT NOT NULL,
  settled_at  INTEGER NOT NULL,
  state       TEXT NOT NULL CHECK (state IN ('settled', 'credited')),
  credited_at INTEGER
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS x402_payments_uncredited ON x402_payments (settled_at) WHERE state = 'settled';
CREATE INDEX IF NOT EXISTS x402_payments_by_key ON x402_payments (key_id, settled_at);`;

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
  tx: string;
  settled_at: number;
  state: PaymentState;
  credited_at: number | null;
}

function entryOf(row: Row): JournalEntry {
  return {
    id: row.id, keyId: row.key_id, plan: row.plan, credits: row.credits, payer: row.payer, network: row.network, asset: row.asset,
    amount: row.amount, payTo: row.pay_to, transaction: row.tx, settledAt: row.settled_at, state: row.state, creditedAt: row.credited_at ?? undefined,
  };
}

/**
 * The {@link PaymentJournal} in a SQLite database (the SQLite store's file), shared by the gateway's
 * workers on one machine: a record is one insert that does nothing when the id exists, and the move to
 * `credited` one update conditioned on `settled`, so two workers never both win either step.
 */
export class SqlitePaymentJournal implements PaymentJournal {
  readonly #insert: JournalStatement;
  readonly #credit: JournalStatement;
  readonly #get: JournalStatement;
  readonly #uncredited: JournalStatement;

  constructor(db: JournalDatabase) {
    db.exec(SCHEMA);
    this.#insert = db.prepare(`INSERT INTO x402_payments (id, key_id, plan, credits, payer, network, asset, amount, pay_to, tx, settled_at, state)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'settled') ON CONFLICT (id) DO NOTHING`);
    this.#credit = db.prepare(`UPDATE x402_payments SET state = 'credited', credited_at = ? WHERE id = ? AND state = 'settled'`);
    this.#get = db.prepare('SELECT * FROM x402_payments WHERE id = ?');
    this.#uncredited = db.prepare(`SELECT * FROM x402_payments WHERE state = 'settled' ORDER BY settled_at`);
  }

  /** See {@link PaymentJournal.record}. */
  async record(p: SettledPayment): Promise<boolean> {
    return this.#insert.run(p.id, p.keyId, p.plan, p.credits, p.payer, p.network, p.asset, p.amount, p.payTo, p.transaction, p.settledAt).changes === 1;
  }

  /** See {@link PaymentJournal.markCredited}. */
  async markCredited(id: string, at: number): Promise<boolean> {
    return this.#credit.run(at, id).changes === 1;
  }

  /** See {@link PaymentJournal.get}. */
  async get(id: string): Promise<JournalEntry | undefined> {
    const row = this.#get.get(id) as Row | undefined;
    return row === undefined ? undefined : entryOf(row);
  }

  /** See {@link PaymentJournal.uncredited}. */
  async uncredited(): Promise<readonly JournalEntry[]> {
    return (this.#uncredited.all() as Row[]).map(entryOf);
  }
}
