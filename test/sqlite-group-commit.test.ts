/**
 * The SQLite store's group commit: the writes asked for during two event-loop turns share one
 * transaction, committed before any of them is answered; a write asked for after that commit goes in the
 * next one. Counted on a real database file, by the transactions the driver was asked to run.
 */
import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type SqliteDatabase } from '../plugins/ledger-sqlite/database.js';
import { GroupCommit } from '../plugins/ledger-sqlite/group-commit.js';
import { resolveSqliteSettings } from '../plugins/ledger-sqlite/settings.js';
import { inCheckPhase } from './helpers/turns.js';

const dir = await mkdtemp(join(tmpdir(), 'tollgate-group-commit-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));

/** The database, with a count of the group transactions run on it. */
function countingDatabase(path: string): { db: SqliteDatabase; commits: () => number } {
  const db = openDatabase(resolveSqliteSettings([{ path }]));
  let commits = 0;
  const counted: SqliteDatabase = {
    ...db,
    get open() {
      return db.open;
    },
    transaction: (fn) => {
      const transaction = db.transaction(fn);
      return Object.assign((...args: Parameters<typeof transaction>) => transaction(...args), {
        immediate: (...args: Parameters<typeof transaction>) => {
          commits++;
          return transaction.immediate(...args);
        },
      });
    },
  };
  return { db: counted, commits: () => commits };
}

t.test('writes of two turns share a commit; a write asked for after it goes in the next', async (t) => {
  const { db, commits } = countingDatabase(join(dir, 'turns.db'));
  t.teardown(() => db.close());
  db.exec('CREATE TABLE writes (n INTEGER)');
  const insert = db.prepare<[number]>('INSERT INTO writes (n) VALUES (?)');
  const count = db.prepare<[], number>('SELECT count(*) FROM writes').pluck();
  const group = new GroupCommit(db);
  const write = (n: number): Promise<number> => group.run(() => (insert.run(n), n));

  const results = await Promise.all([write(1), write(2), inCheckPhase(1, () => write(3))]);
  t.same(results, [1, 2, 3], 'each caller gets its own work\'s result');
  t.equal(commits(), 1, 'the writes of this turn and the next share one commit');
  t.equal(count.get(), 3, 'all three are in the file');

  // The commit of the next two writes runs in the next turn's check phase, before the third write's
  // callback of that same phase: the third goes in a commit of its own.
  const answered: number[] = [];
  const later = [write(4), inCheckPhase(1, () => write(5)), inCheckPhase(2, () => write(6))].map((p) => p.then((n) => (answered.push(n), n)));
  t.same(await Promise.all(later), [4, 5, 6]);
  t.equal(commits(), 3, 'a write asked for after the commit goes in the next one');
  t.same(answered.slice(0, 2).sort(), [4, 5], 'the first commit\'s writes are answered before the later one');
  t.equal(count.get(), 6);
});

t.test('a transaction that fails rejects every write of its group, and nothing of it stays', async (t) => {
  const { db, commits } = countingDatabase(join(dir, 'fails.db'));
  t.teardown(() => db.close());
  db.exec('CREATE TABLE writes (n INTEGER NOT NULL)');
  const insert = db.prepare<[number | null]>('INSERT INTO writes (n) VALUES (?)');
  const count = db.prepare<[], number>('SELECT count(*) FROM writes').pluck();
  const group = new GroupCommit(db);
  const outcomes = await Promise.allSettled([group.run(() => insert.run(1)), inCheckPhase(1, () => group.run(() => insert.run(null)))]);
  t.same(outcomes.map((o) => o.status), ['rejected', 'rejected'], 'both writes of the group hear it failed');
  t.equal(commits(), 1);
  t.equal(count.get(), 0, 'rolled back whole');
});
