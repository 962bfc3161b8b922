import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { betterSqlite3 } from './peers.js';
import type { ResolvedSqliteSettings } from './settings.js';

// The parts of better-sqlite3 the stores use, declared here so the plugin's public declarations compile
// without `@types/better-sqlite3`; `connectionOf` adapts the driver's connection to them, type-checked.

/** What a statement's `run` reports. */
export interface SqliteRunResult {
  /** Rows the statement changed. */
  readonly changes: number;
  /** The rowid of the last row inserted. */
  readonly lastInsertRowid: number | bigint;
}

/** A prepared better-sqlite3 statement taking `Params` and reading rows of type `Row`. */
export interface SqliteStatement<Params extends unknown[], Row = unknown> {
  /** Runs the statement. */
  run(...params: Params): SqliteRunResult;
  /** The first row, if any. */
  get(...params: Params): Row | undefined;
  /** Every row. */
  all(...params: Params): Row[];
  /** Makes reads return each row's first column only. */
  pluck(toggle?: boolean): this;
  /** Every row, one at a time. */
  iterate(...params: Params): IterableIterator<Row>;
}

/** A better-sqlite3 transaction function (with its `.immediate` form, which takes the write lock first). */
export interface SqliteTransaction<Args extends unknown[], Result> {
  /** Runs the transaction (`BEGIN`). */
  (...args: Args): Result;
  /** Runs the transaction with `BEGIN IMMEDIATE`. */
  immediate(...args: Args): Result;
}

/** A better-sqlite3 connection. */
export interface SqliteDatabase {
  /** False once closed. */
  readonly open: boolean;
  /** Prepares a statement. */
  prepare<Params extends unknown[] = unknown[], Row = unknown>(sql: string): SqliteStatement<Params, Row>;
  /** Wraps `fn` in a transaction. */
  transaction<Args extends unknown[], Result>(fn: (...args: Args) => Result): SqliteTransaction<Args, Result>;
  /** Runs SQL text (several statements). */
  exec(sql: string): unknown;
  /** Runs a PRAGMA. */
  pragma(sql: string, options?: { readonly simple?: boolean }): unknown;
  /** Closes the connection. */
  close(): unknown;
}

// Each entry moves the schema one version up (PRAGMA user_version); never edit a released entry, add one.
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE keys (
     id          TEXT PRIMARY KEY,
     key_hash    TEXT NOT NULL UNIQUE,
     key_hint    TEXT NOT NULL,
     plan        TEXT NOT NULL,
     label       TEXT,
     secret_hash TEXT,
     settings    TEXT,
     created_at  INTEGER NOT NULL,
     updated_at  INTEGER NOT NULL,
     revoked_at  INTEGER
   );
   CREATE TABLE balances (
     key_id TEXT NOT NULL,
     day    TEXT NOT NULL,
     used   INTEGER NOT NULL,
     PRIMARY KEY (key_id, day)
   ) WITHOUT ROWID;
   CREATE TABLE usage (
     key_id  TEXT NOT NULL,
     day     TEXT NOT NULL,
     method  TEXT NOT NULL,
     calls   INTEGER NOT NULL,
     credits INTEGER NOT NULL,
     bytes   INTEGER NOT NULL,
     failed  INTEGER NOT NULL,
     PRIMARY KEY (key_id, day, method)
   ) WITHOUT ROWID;
   CREATE INDEX balances_by_day ON balances (day);
   CREATE INDEX usage_by_day ON usage (day);`,
  // Refunds by debit id, so a refund is applied at most once, in the transaction that gives the credits back.
  `CREATE TABLE refunds (
     id  TEXT PRIMARY KEY,
     day TEXT NOT NULL
   ) WITHOUT ROWID;
   CREATE INDEX refunds_by_day ON refunds (day);`,
  // Calls a response cache answered (hits) and cacheable calls that went upstream (misses).
  `ALTER TABLE usage ADD COLUMN cache_hits INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE usage ADD COLUMN cache_misses INTEGER NOT NULL DEFAULT 0;`,
  // Usage per network too (an export for billing tells networks apart; rows from before have network '').
  // Plans operators manage, and a version every change of them raises, which gateways poll.
  `CREATE TABLE usage_by_network (
     key_id       TEXT NOT NULL,
     day          TEXT NOT NULL,
     network      TEXT NOT NULL,
     method       TEXT NOT NULL,
     calls        INTEGER NOT NULL,
     credits      INTEGER NOT NULL,
     bytes        INTEGER NOT NULL,
     failed       INTEGER NOT NULL,
     cache_hits   INTEGER NOT NULL DEFAULT 0,
     cache_misses INTEGER NOT NULL DEFAULT 0,
     PRIMARY KEY (key_id, day, network, method)
   ) WITHOUT ROWID;
   INSERT INTO usage_by_network SELECT key_id, day, '', method, calls, credits, bytes, failed, cache_hits, cache_misses FROM usage;
   DROP TABLE usage;
   ALTER TABLE usage_by_network RENAME TO usage;
   CREATE INDEX usage_by_day ON usage (day);
   CREATE TABLE plans (
     name               TEXT PRIMARY KEY,
     daily_credits      INTEGER NOT NULL,
     credits_per_second INTEGER NOT NULL,
     failover           INTEGER NOT NULL,
     created_at         INTEGER NOT NULL,
     updated_at         INTEGER NOT NULL
   ) WITHOUT ROWID;
   CREATE TABLE plans_version (
     id      INTEGER PRIMARY KEY CHECK (id = 1),
     version INTEGER NOT NULL
   );
   INSERT INTO plans_version VALUES (1, 0);`,
  // A paid (bought or topped-up) balance per key beside the daily one, never reset; and the top-ups
  // applied, by id, so a top-up is added at most once, in the transaction that adds it.
  `CREATE TABLE paid_balances (
     key_id  TEXT PRIMARY KEY,
     credits INTEGER NOT NULL
   ) WITHOUT ROWID;
   CREATE TABLE top_ups (
     id         TEXT PRIMARY KEY,
     key_id     TEXT NOT NULL,
     credits    INTEGER NOT NULL,
     applied_at INTEGER NOT NULL
   ) WITHOUT ROWID;
   CREATE INDEX top_ups_by_key ON top_ups (key_id);`,
];

/**
 * Opens (creating if needed) the database at `settings.path` in WAL mode and brings its schema up to
 * date. WAL lets readers (the CLI, a second process) work while the gateway writes.
 */
export function openDatabase(settings: ResolvedSqliteSettings): SqliteDatabase {
  if (settings.path !== ':memory:') mkdirSync(dirname(settings.path), { recursive: true });
  const db = connectionOf(new betterSqlite3.default(settings.path, { timeout: settings.busyTimeoutMs }));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${settings.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
    db.pragma('foreign_keys = ON');
    migrate(db);
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

/**
 * The driver's connection as a {@link SqliteDatabase}. Statements and transactions are the driver's own
 * objects (structurally the declared ones): only `prepare` gains a call, not the statements run on the
 * hot path.
 */
function connectionOf(db: BetterSqlite3.Database): SqliteDatabase {
  return {
    get open() {
      return db.open;
    },
    prepare: <Params extends unknown[], Row>(sql: string): SqliteStatement<Params, Row> => db.prepare<Params, Row>(sql),
    transaction: <Args extends unknown[], Result>(fn: (...args: Args) => Result): SqliteTransaction<Args, Result> => db.transaction(fn),
    exec: (sql) => db.exec(sql),
    pragma: (sql, options) => db.pragma(sql, options),
    close: () => db.close(),
  };
}

function migrate(db: SqliteDatabase): void {
  const upgrade = db.transaction(() => {
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > MIGRATIONS.length) {
      throw new Error(`the database has schema version ${version}, newer than this Tollgate knows (${MIGRATIONS.length}): upgrade Tollgate`);
    }
    for (let v = version; v < MIGRATIONS.length; v++) db.exec(MIGRATIONS[v]!);
    if (version !== MIGRATIONS.length) db.pragma(`user_version = ${MIGRATIONS.length}`);
  });
  upgrade.immediate();
}
