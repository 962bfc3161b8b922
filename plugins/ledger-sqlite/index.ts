/**
 * The SQLite store plugin: API keys (hashed), daily credit balances and usage in one SQLite file (WAL),
 * the durable default of a single gateway instance. A debit is committed before its call is dispatched.
 *
 * @packageDocumentation
 */
export { ledgerSqlite, SqliteDatabaseToken, type SqliteLedgerPlugin } from './plugin.js';
export { openSqliteStore, type SqliteStore } from './sqlite-store.js';
export { SqliteCreditLedger } from './sqlite-credit-ledger.js';
export { SqliteKeyRegistry } from './sqlite-key-registry.js';
export { SqlitePlanRegistry, PLAN_POLL_MS } from './sqlite-plan-registry.js';
export { SqliteUsageRecorder, MAX_METHOD_LENGTH } from './sqlite-usage-recorder.js';
export { type SqliteDatabase, type SqliteStatement, type SqliteTransaction, type SqliteRunResult } from './database.js';
export { GroupCommit } from './group-commit.js';
export { LEDGER_SQLITE_PLUGIN, DEFAULT_SQLITE_PATH, resolveSqliteSettings, type SqliteLedgerSettings, type ResolvedSqliteSettings } from './settings.js';
export { SqliteFilterStore } from './sqlite-filter-store.js';
export { SqlitePinStore } from './sqlite-pin-store.js';
