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

const KNOWN = new Set(['path', 'synchronous', 'retainDays', 'busyTimeoutMs']);

/**
 * Checks settings from code or config (`where` names them in errors) and applies defaults; later sources
 * win over earlier ones.
 *
 * @throws Error naming the offending field.
 */
export function resolveSqliteSettings(sources: ReadonlyArray<Readonly<Record<string, unknown>> | undefined>, where = `plugins.${LEDGER_SQLITE_PLUGIN}`): ResolvedSqliteSettings {
  const merged: Record<string, unknown> = {};
  for (const source of sources) {
    if (source === undefined) continue;
    for (const [name, value] of Object.entries(source)) {
      if (!KNOWN.has(name)) throw new Error(`${where}.${name}: is not a known field (known: ${[...KNOWN].join(', ')})`);
      if (value !== undefined) merged[name] = value;
    }
  }
  const path = merged.path ?? DEFAULT_SQLITE_PATH;
  if (typeof path !== 'string' || path === '') throw new Error(`${where}.path: must be a non-empty string`);
  const synchronous = merged.synchronous ?? 'normal';
  if (synchronous !== 'normal' && synchronous !== 'full') throw new Error(`${where}.synchronous: must be one of normal, full`);
  const whole = (name: string, fallback: number, min: number): number => {
    const value = merged[name] ?? fallback;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min) throw new Error(`${where}.${name}: must be an integer >= ${min}`);
    return value;
  };
  return { path, synchronous, retainDays: whole('retainDays', 90, 1), busyTimeoutMs: whole('busyTimeoutMs', 5000, 0) };
}
