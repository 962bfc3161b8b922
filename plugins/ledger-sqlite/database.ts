import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';
import { betterSqlite3 } from './peers.js';
import type { ResolvedSqliteSettings } from './settings.js';

/** A better-sqlite3 connection. */
export type SqliteDatabase = Database.Database;

/** A prepared better-sqlite3 statement taking `Params` and reading rows of type `Row`. */
export type SqliteStatement<Params extends unknown[], Row = unknown> = Database.Statement<Params, Row>;

/** A better-sqlite3 transaction function (with its `.immediate` form). */
export type SqliteTransaction<F extends (...args: never[]) => unknown> = Database.Transaction<F>;

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
];

/**
 * Opens (creating if needed) the database at `settings.path` in WAL mode and brings its schema up to
 * date. WAL lets readers (the CLI, a second process) work while the gateway writes.
 */
export function openDatabase(settings: ResolvedSqliteSettings): SqliteDatabase {
  if (settings.path !== ':memory:') mkdirSync(dirname(settings.path), { recursive: true });
  const db = new betterSqlite3.default(settings.path, { timeout: settings.busyTimeoutMs });
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
