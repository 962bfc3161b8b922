import type { SqliteDatabase, SqliteTransaction } from './database.js';

interface Write {
  readonly work: () => unknown;
  readonly resolve?: (value: unknown) => void;
  readonly reject?: (error: unknown) => void;
}

/**
 * Group commit: writes asked for during two turns of the event loop run in one transaction, committed at
 * the end of the second (`setImmediate` twice); each waiting caller is answered once the commit is done.
 * A committed transaction costs the same whether it holds one write or fifty, so under load a debit
 * costs a fraction of a commit, and it is still on disk before the caller goes on.
 */
export class GroupCommit {
  readonly #db: SqliteDatabase;
  readonly #transaction: SqliteTransaction<[batch: readonly Write[], results: unknown[]], void>;
  #queue: Write[] = [];
  #scheduled = false;

  constructor(db: SqliteDatabase) {
    this.#db = db;
    this.#transaction = db.transaction((batch: readonly Write[], results: unknown[]) => {
      for (let i = 0; i < batch.length; i++) results[i] = batch[i]!.work();
    });
  }

  /** Runs `work` in the next group transaction; resolves with its result once that transaction committed. */
  run<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      this.#schedule();
    });
  }

  /** Runs `work` in the next group transaction without waiting for it (usage counters). */
  add(work: () => unknown): void {
    this.#queue.push({ work });
    this.#schedule();
  }

  /** Commits whatever is queued now (before closing the database). */
  flush(): void {
    const batch = this.#queue;
    if (batch.length === 0) return;
    this.#queue = [];
    if (!this.#db.open) {
      const closed = new Error('the SQLite store is closed');
      for (const write of batch) write.reject?.(closed);
      return;
    }
    const results = new Array<unknown>(batch.length);
    try {
      // IMMEDIATE: the write lock from the start, so a balance read in the transaction cannot go stale.
      this.#transaction.immediate(batch, results);
    } catch (error) {
      // Rolled back as a whole: nobody was charged, and every waiting caller learns it.
      for (const write of batch) write.reject?.(error);
      return;
    }
    for (let i = 0; i < batch.length; i++) batch[i]!.resolve?.(results[i]);
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    // Open through the next turn's poll phase too: a commit costs about the same whatever it holds, and
    // one turn more gathers more calls into it, for one turn of wait (figures in bench/README.md).
    setImmediate(() =>
      setImmediate(() => {
        this.#scheduled = false;
        this.flush();
      }),
    );
  }
}
