import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { AnyRedis } from './client.js';

/** Pause before the next attempt: doubles from 100 ms up to 2 s, so a Redis that converges is found soon and a dead one is not hammered. */
export function startBackoffMs(attempt: number): number {
  return Math.min(100 * 2 ** Math.min(attempt, 5), 2000);
}

/**
 * Runs `attempt` until it succeeds, with backoff between failures, until `deadline` (a `Date.now()` time):
 * what the store needs at start (a connection, a subscription, a first read) is retried while Redis, or a
 * Cluster still electing masters, is slow to answer, instead of failing the start at the first refusal.
 * Each failure is logged (as `what`) at debug level; the first one and then every five at warn.
 *
 * @throws Error naming `what`, `setting` and the last failure once the deadline has passed.
 */
export async function retryUntil<T>(what: string, deadline: number, setting: string, attempt: (timeLeftMs: number) => Promise<T>, logger?: Logger): Promise<T> {
  const startedAt = Date.now();
  for (let n = 0; ; n++) {
    try {
      return await attempt(Math.max(1, deadline - Date.now()));
    } catch (error) {
      const reason = (error as Error).message ?? String(error);
      const pause = startBackoffMs(n);
      if (Date.now() + pause >= deadline) {
        throw new Error(`${what}: still failing after ${Date.now() - startedAt} ms (${setting}): ${reason}`);
      }
      const entry = { attempt: n + 1, reason, retryInMs: pause };
      if (n % 5 === 0) logger?.warn(entry, `${what}: retrying until ${setting}`);
      else logger?.debug(entry, `${what}: retrying`);
      await delay(pause);
    }
  }
}

/**
 * Resolves once `client` is connected (at once when it is), starting its connection if nobody has;
 * rejects after `timeoutMs` (the client keeps retrying by itself).
 */
export async function readyWithin(client: AnyRedis, timeoutMs: number, address: string): Promise<void> {
  if (client.status === 'ready') return;
  const ready = new Promise<void>((resolve) => client.once('ready', () => resolve()));
  if (client.status === 'wait' || client.status === 'end') client.connect().catch(() => { /* retried by the client; the timeout decides */ });
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`cannot reach Redis at ${address} within ${timeoutMs} ms`)), timeoutMs)));
  try {
    await Promise.race([ready, late]);
  } finally {
    clearTimeout(timer);
  }
}
