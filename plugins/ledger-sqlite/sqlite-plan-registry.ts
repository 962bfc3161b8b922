import { definedOf, type PlanChangeListener, type PlanChanges, type PlanRegistry, type StoredPlan } from '../../core/store-api.js';
import type { SqliteDatabase, SqliteStatement } from './database.js';

/** How often a watching gateway asks whether another process (a worker, the CLI) changed the plans, in ms. */
export const PLAN_POLL_MS = 1_000;

interface PlanRow {
  name: string;
  daily_credits: number;
  credits_per_second: number;
  failover: number;
  created_at: number;
  updated_at: number;
}

function fromRow(row: PlanRow): StoredPlan {
  return {
    name: row.name,
    dailyCredits: row.daily_credits,
    creditsPerSecond: row.credits_per_second,
    failover: row.failover === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/**
 * Managed plans in SQLite. Every change raises a version in the same transaction; a watching gateway
 * reads that one number every {@link PLAN_POLL_MS} (never on a call), so a change made by another
 * process sharing the file (a worker, `tollgate plans`) reaches it within that time, and a change made
 * through this registry at once.
 */
export class SqlitePlanRegistry implements PlanRegistry {
  readonly #db: SqliteDatabase;
  readonly #byName: SqliteStatement<[string], PlanRow>;
  readonly #version: SqliteStatement<[], number>;
  readonly #bump: SqliteStatement<[]>;
  readonly #listeners = new Set<PlanChangeListener>();
  #poll: NodeJS.Timeout | undefined;
  #seen = 0;

  constructor(db: SqliteDatabase) {
    this.#db = db;
    this.#byName = db.prepare<[string], PlanRow>('SELECT * FROM plans WHERE name = ?');
    this.#version = db.prepare<[], number>('SELECT version FROM plans_version WHERE id = 1').pluck();
    this.#bump = db.prepare<[]>('UPDATE plans_version SET version = version + 1 WHERE id = 1');
  }

  insert(plan: StoredPlan): boolean {
    const inserted = this.#db.transaction(() => {
      const result = this.#db
        .prepare('INSERT INTO plans (name, daily_credits, credits_per_second, failover, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING')
        .run(plan.name, plan.dailyCredits, plan.creditsPerSecond, plan.failover ? 1 : 0, plan.createdAt, plan.updatedAt);
      if (result.changes === 1) this.#bump.run();
      return result.changes === 1;
    }).immediate();
    if (inserted) this.#tell();
    return inserted;
  }

  get(name: string): StoredPlan | undefined {
    const row = this.#byName.get(name);
    return row === undefined ? undefined : fromRow(row);
  }

  list(): StoredPlan[] {
    return (this.#db.prepare('SELECT * FROM plans ORDER BY name').all() as PlanRow[]).map(fromRow);
  }

  update(name: string, changes: PlanChanges, now: number): StoredPlan | undefined {
    const set = definedOf(changes);
    const columns: Array<[string, unknown]> = [];
    if (set.dailyCredits !== undefined) columns.push(['daily_credits', set.dailyCredits]);
    if (set.creditsPerSecond !== undefined) columns.push(['credits_per_second', set.creditsPerSecond]);
    if (set.failover !== undefined) columns.push(['failover', set.failover ? 1 : 0]);
    columns.push(['updated_at', now]);
    const assignments = columns.map(([column]) => `${column} = ?`).join(', ');
    const updated = this.#db.transaction(() => {
      const result = this.#db.prepare(`UPDATE plans SET ${assignments} WHERE name = ?`).run(...columns.map(([, value]) => value), name);
      if (result.changes === 1) this.#bump.run();
      return result.changes === 1;
    }).immediate();
    if (!updated) return undefined;
    this.#tell();
    return this.get(name);
  }

  delete(name: string): boolean {
    const deleted = this.#db.transaction(() => {
      const result = this.#db.prepare('DELETE FROM plans WHERE name = ?').run(name);
      if (result.changes === 1) this.#bump.run();
      return result.changes === 1;
    }).immediate();
    if (deleted) this.#tell();
    return deleted;
  }

  /** Calls `listener` on this registry's changes at once, and on other processes' within {@link PLAN_POLL_MS}. */
  watch(listener: PlanChangeListener): () => void {
    this.#listeners.add(listener);
    if (this.#poll === undefined) {
      this.#seen = this.#version.get() ?? 0;
      this.#poll = setInterval(() => this.#check(), PLAN_POLL_MS);
      this.#poll.unref();
    }
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0) this.stopWatching();
    };
  }

  /** Stops polling (the store closes). */
  stopWatching(): void {
    clearInterval(this.#poll);
    this.#poll = undefined;
  }

  #check(): void {
    if (!this.#db.open) return this.stopWatching();
    const version = this.#version.get() ?? 0;
    if (version === this.#seen) return;
    this.#seen = version;
    for (const listener of this.#listeners) listener();
  }

  /** Tells the listeners once the change is done (after the caller's statement, never inside it). */
  #tell(): void {
    if (this.#listeners.size === 0) return;
    this.#seen = this.#version.get() ?? this.#seen;
    queueMicrotask(() => { for (const listener of this.#listeners) listener(); });
  }
}
