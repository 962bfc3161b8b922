import type { AnyRedis } from './client.js';

/**
 * Connects `subscriber` and subscribes it to `channel`, or fails after `timeoutMs` with a message naming
 * Redis's address. Both wait for as long as the client retries (a Redis Cluster whose slots are not all
 * served yet keeps a cluster client's `connect` pending): without a bound, a gateway would hang at start
 * instead of saying why it cannot.
 */
export async function subscribeWithin(subscriber: AnyRedis, channel: string, timeoutMs: number, address: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`cannot subscribe to "${channel}" on Redis at ${address} within ${timeoutMs} ms`)), timeoutMs);
  });
  const work = (async () => {
    await subscriber.connect();
    await subscriber.subscribe(channel);
  })();
  // Settled by the disconnect below when it comes late: nobody waits for it then.
  work.catch(() => undefined);
  try {
    await Promise.race([work, late]);
  } catch (error) {
    subscriber.disconnect();
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
