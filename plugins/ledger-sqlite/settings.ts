import { validateSettings } from '../../core/plugin-api.js';

/** The plugin's name, and the key of its settings under `plugins` in the config. */
export const LEDGER_SQLITE_PLUGIN = 'ledger-sqlite';

/** Settings of the SQLite store (`plugins.ledger-sqlite` in the config; the config wins over code). */
export interface SqliteLedgerSettings {
  /**
   * The database file (default `.data/tollgate.db`, relative to the working directory; its folder is
   * created). `:memory:` keeps everything in memory, for tests.
   */
  readonly path?: string;
  /**
   * SQLite's `synchronous` setting in WAL mode. `normal` (default): every committed debit survives the
   * gateway being killed (`kill -9`, a crash); a power cut or kernel panic may lose the last
   * transactions. `full`: also survives those, at the cost of an fsync per debit.
   */
  readonly synchronous?: 'normal' | 'full';
  /** Days of balances and usage kept; older days are deleted when the UTC day rolls over (default 90). */
  readonly retainDays?: number;
  /** How long a write waits for another process holding the database lock, in ms (default 5000). */
  readonly busyTimeoutMs?: number;
}

/** Settings with every default applied. */
export interface ResolvedSqliteSettings {
  /** See {@link SqliteLedgerSettings.path}. */
  readonly path: string;
  /** See {@link SqliteLedgerSettings.synchronous}. */
  readonly synchronous: 'normal' | 'full';
  /** See {@link SqliteLedgerSettings.retainDays}. */
  readonly retainDays: number;
  /** See {@link SqliteLedgerSettings.busyTimeoutMs}. */
  readonly busyTimeoutMs: number;
}

/** The default database file. */
export const DEFAULT_SQLITE_PATH = '.data/tollgate.db';

/** The settings' schema: unknown or bad fields are refused by name, in the gateway's configuration format. */
const SETTINGS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    path: { type: 'string', minLength: 1, default: DEFAULT_SQLITE_PATH },
    synchronous: { enum: ['normal', 'full'], default: 'normal' },
    retainDays: { type: 'integer', minimum: 1, default: 90 },
    busyTimeoutMs: { type: 'integer', minimum: 0, default: 5000 },
  },
} as const;

/**
 * Checks settings from code or config (`where` names them in errors) and applies defaults; later sources
 * win over earlier ones.
 *
 * @throws ConfigError naming each offending field.
 */
export function resolveSqliteSettings(sources: ReadonlyArray<object | undefined>, where = `plugins.${LEDGER_SQLITE_PLUGIN}`): ResolvedSqliteSettings {
  const { path, synchronous, retainDays, busyTimeoutMs } = validateSettings<ResolvedSqliteSettings>(SETTINGS_SCHEMA, sources, where);
  return { path, synchronous, retainDays, busyTimeoutMs };
}
