import { apiKeyHash, recordOf, type ApiKeyRecord, type KeyChanges, type KeyRegistry, type StoredKey, type KeyChangeListener } from '../../core/store-api.js';
import type { SqliteDatabase, SqliteStatement } from './database.js';

interface KeyRow {
  id: string;
  key_hash: string;
  key_hint: string;
  plan: string;
  label: string | null;
  secret_hash: string | null;
  settings: string | null;
  created_at: number;
  updated_at: number;
  revoked_at: number | null;
}

function fromRow(row: KeyRow): StoredKey {
  return {
    id: row.id,
    plan: row.plan,
    keyHash: row.key_hash,
    keyHint: row.key_hint,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    ...(row.label === null ? {} : { label: row.label }),
    ...(row.secret_hash === null ? {} : { secretHash: row.secret_hash }),
    ...(row.settings === null ? {} : { settings: JSON.parse(row.settings) as Record<string, unknown> }),
    ...(row.revoked_at === null ? {} : { revokedAt: row.revoked_at }),
  };
}

/**
 * API keys in SQLite, by the SHA-256 of the key (the key itself is never stored). Every lookup reads the
 * table, so a key created, rotated or revoked by another process sharing the file (the CLI) takes effect
 * on the next call.
 */
export class SqliteKeyRegistry implements KeyRegistry {
  readonly #db: SqliteDatabase;
  readonly #byHash: SqliteStatement<[string], KeyRow>;
  readonly #byId: SqliteStatement<[string], KeyRow>;
  readonly #listeners = new Set<KeyChangeListener>();

  constructor(db: SqliteDatabase) {
    this.#db = db;
    this.#byHash = db.prepare<[string], KeyRow>('SELECT * FROM keys WHERE key_hash = ?');
    this.#byId = db.prepare<[string], KeyRow>('SELECT * FROM keys WHERE id = ?');
  }

  find(apiKey: string): ApiKeyRecord | undefined {
    const row = this.#byHash.get(apiKeyHash(apiKey));
    return row === undefined ? undefined : recordOf(fromRow(row));
  }

  /**
   * Calls `listener` with the hashes of the keys this registry changes. Changes made by another process
   * sharing the database file are not seen (nothing announces them).
   */
  watch(listener: KeyChangeListener): () => void {
    this.#listeners.add(listener);
    return () => { this.#listeners.delete(listener); };
  }

  /** Tells the listeners once the change is done (after the caller's statement, never inside it). */
  #tell(hashes: readonly string[]): void {
    if (this.#listeners.size === 0) return;
    queueMicrotask(() => { for (const listener of this.#listeners) listener(hashes); });
  }

  insert(key: StoredKey): boolean {
    const result = this.#db
      .prepare(
        `INSERT INTO keys (id, key_hash, key_hint, plan, label, secret_hash, settings, created_at, updated_at, revoked_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      )
      .run(
        key.id,
        key.keyHash,
        key.keyHint,
        key.plan,
        key.label ?? null,
        key.secretHash ?? null,
        key.settings === undefined ? null : JSON.stringify(key.settings),
        key.createdAt,
        key.updatedAt,
        key.revokedAt ?? null,
      );
    if (result.changes === 1) this.#tell([key.keyHash]);
    return result.changes === 1;
  }

  get(id: string): StoredKey | undefined {
    const row = this.#byId.get(id);
    return row === undefined ? undefined : fromRow(row);
  }

  list(): StoredKey[] {
    return (this.#db.prepare('SELECT * FROM keys ORDER BY id').all() as KeyRow[]).map(fromRow);
  }

  update(id: string, changes: KeyChanges, now: number): StoredKey | undefined {
    const columns: Array<[string, unknown]> = [];
    if (changes.plan !== undefined) columns.push(['plan', changes.plan]);
    if (changes.label !== undefined) columns.push(['label', changes.label]);
    if (changes.keyHash !== undefined) columns.push(['key_hash', changes.keyHash]);
    if (changes.keyHint !== undefined) columns.push(['key_hint', changes.keyHint]);
    if (changes.secretHash !== undefined) columns.push(['secret_hash', changes.secretHash]);
    if (changes.settings !== undefined) columns.push(['settings', JSON.stringify(changes.settings)]);
    if (changes.revokedAt !== undefined) columns.push(['revoked_at', changes.revokedAt]);
    columns.push(['updated_at', now]);
    const assignments = columns.map(([column]) => `${column} = ?`).join(', ');
    const before = this.#byId.get(id);
    const result = this.#db.prepare(`UPDATE keys SET ${assignments} WHERE id = ?`).run(...columns.map(([, value]) => value), id);
    if (result.changes !== 1) return undefined;
    this.#tell([...(before === undefined ? [] : [before.key_hash]), ...(changes.keyHash === undefined ? [] : [changes.keyHash])]);
    return this.get(id);
  }
}
