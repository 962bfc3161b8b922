import { openDatabase, type SqliteDatabase } from './database.js';
import { resolveSqliteSettings, type ResolvedSqliteSettings, type SqliteLedgerSettings } from './settings.js';
import { SqliteCreditLedger } from './sqlite-credit-ledger.js';
import { SqliteKeyRegistry } from './sqlite-key-registry.js';
import { SqlitePlanRegistry } from './sqlite-plan-registry.js';
import { SqliteUsageRecorder } from './sqlite-usage-recorder.js';
import { GroupCommit } from './group-commit.js';

/** One SQLite database holding keys, plans, daily balances and usage. */
export interface SqliteStore {
  /** The settings it was opened with. */
  readonly settings: ResolvedSqliteSettings;
  /** The connection. */
  readonly db: SqliteDatabase;
  /** The group commit every write of the ledger and the usage recorder goes through. */
  readonly writer: GroupCommit;
  /** Daily balances. */
  readonly ledger: SqliteCreditLedger;
  /** API keys (hashed). */
  readonly keys: SqliteKeyRegistry;
  /** Plans operators manage. */
  readonly plans: SqlitePlanRegistry;
  /** Usage per key, day and method. */
  readonly usage: SqliteUsageRecorder;
  /** Commits pending writes and closes the database (checkpointing the WAL). Idempotent. */
  close(): void;
}

/**
 * Opens the store at `settings.path` (creating the file and its folder), outside any gateway: for the
 * CLI, scripts and tests.
 *
 * @example
 * ```ts
 * const store = openSqliteStore({ path: '.data/tollgate.db' });
 * console.log(store.usage.usage('acme', '2026-01-31'));
 * store.close();
 * ```
 */
export function openSqliteStore(settings: SqliteLedgerSettings | ResolvedSqliteSettings = {}): SqliteStore {
  const resolved = resolveSqliteSettings([settings]);
  const db = openDatabase(resolved);
  const writer = new GroupCommit(db);
  const plans = new SqlitePlanRegistry(db);
  return {
    settings: resolved,
    db,
    writer,
    ledger: new SqliteCreditLedger(db, writer, resolved.retainDays),
    keys: new SqliteKeyRegistry(db),
    plans,
    usage: new SqliteUsageRecorder(db, writer),
    close() {
      if (!db.open) return;
      plans.stopWatching();
      writer.flush();
      db.close();
    },
  };
}
