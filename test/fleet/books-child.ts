/**
 * Reads the fleet's books from its Redis, from a host that can reach it (the test process itself may not:
 * with network namespaces, Redis lives on a host of its own). Run as
 * `node --import tsx books-child.ts` with `TOLLGATE_FLEET_REDIS` holding the `ledger-redis` settings; it
 * prints `READY`, then answers each line `{"ids":[...],"method":"eth_blockNumber"}` on stdin with one
 * line `BOOKS {"<id>":{"used":N,"calls":N,"credits":N},...}` for today (UTC).
 */
import 'reflect-metadata';
import { createInterface } from 'node:readline';
import { utcDay } from '../../core/store-api.js';
import { createRedisStore } from '../../plugins/ledger-redis/index.js';

/** One line asked of the child. */
export interface BooksQuery {
  readonly ids: readonly string[];
  readonly method: string;
}

/** A key's books for today: credits used, and the usage counters of one method. */
export interface KeyBooks {
  readonly used: number;
  readonly calls: number;
  readonly credits: number;
}

const script = new URL(import.meta.url).pathname;

if (process.argv[1] === script) {
  const settings = JSON.parse(process.env.TOLLGATE_FLEET_REDIS ?? '{}') as Record<string, unknown>;
  const store = createRedisStore(settings);
  await store.open();
  process.stdout.write('READY\n');
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    const query = JSON.parse(line) as BooksQuery;
    const now = new Date();
    const books: Record<string, KeyBooks> = {};
    for (const id of query.ids) {
      const used = (await store.ledger.balance(id, Number.MAX_SAFE_INTEGER, now)).used;
      const usage = (await store.usage.usage(id, utcDay(now)))[query.method];
      books[id] = { used, calls: usage?.calls ?? 0, credits: usage?.credits ?? 0 };
    }
    process.stdout.write(`BOOKS ${JSON.stringify(books)}\n`);
  }
  await store.close();
}
