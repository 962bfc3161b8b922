import type { Test } from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRedisStore, type RedisStore } from '../../plugins/ledger-redis/index.js';
import { openSqliteStore, type SqliteStore } from '../../plugins/ledger-sqlite/index.js';
import { startRedisServer } from './redis-server.js';

/** Two connections to one SQLite file in a fresh directory, as two workers of a machine hold; closed and removed at the end of `t`. */
export function twoSqliteStores(t: Test, name: string): [SqliteStore, SqliteStore] {
  const dir = mkdtempSync(join(tmpdir(), `tollgate-${name}-`));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const a = openSqliteStore({ path: join(dir, 'tollgate.db') });
  const b = openSqliteStore({ path: join(dir, 'tollgate.db') });
  t.teardown(() => { a.close(); b.close(); });
  return [a, b];
}

/** Two open stores on one new redis-server, as two instances hold; closed and the server stopped at the end of `t`. */
export async function twoRedisStores(t: Test, prefix: string): Promise<[RedisStore, RedisStore]> {
  const redis = await startRedisServer();
  t.teardown(() => redis.stop());
  const a = createRedisStore({ url: redis.url, prefix });
  const b = createRedisStore({ url: redis.url, prefix });
  await a.open();
  await b.open();
  t.teardown(async () => { await a.close(); await b.close(); });
  return [a, b];
}
