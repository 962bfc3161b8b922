import { createRedisStore, type RedisStore } from '../../plugins/ledger-redis/index.js';

/** A Redis store on `url` under `prefix`, opened (connected, scripts loaded). */
export async function openRedisStore(url: string, prefix: string): Promise<RedisStore> {
  const store = createRedisStore({ url, prefix });
  await store.open();
  return store;
}

/** Scripts Redis has run so far (EVAL and EVALSHA), from INFO commandstats. */
export async function scriptsRun(store: RedisStore): Promise<number> {
  const stats = await store.connection.client.info('commandstats');
  let total = 0;
  for (const match of stats.matchAll(/^cmdstat_(evalsha|eval):calls=(\d+)/gm)) total += Number(match[2]);
  return total;
}
