import type { AnyRedis } from './client.js';
import { ioredis } from './peers.js';

/** The channels each single-Redis subscriber made by {@link subscriberBeside} is subscribed to. */
const channelsOf = new WeakMap<AnyRedis, Set<string>>();

/**
 * A connection for pub/sub beside `client` (it may queue its SUBSCRIBE until connected). A Cluster
 * client subscribes through one node and moves the subscription when that node fails. A single Redis's
 * subscriber (fixed or through Sentinel) is subscribed again after a reconnection here, not by ioredis:
 * ioredis's own resubscription leaves its command without a handler, so a stop that closes the
 * connection before Redis answered it ended the process with an unhandled "Connection is closed.".
 */
export function subscriberBeside(client: AnyRedis): AnyRedis {
  if (!(client instanceof ioredis.Redis)) return client.duplicate(undefined, { enableOfflineQueue: true, lazyConnect: true });
  const subscriber = client.duplicate({ enableOfflineQueue: true, lazyConnect: true, autoResubscribe: false });
  const channels = new Set<string>();
  channelsOf.set(subscriber, channels);
  subscriber.on('ready', () => {
    // Failed (the connection closed again, or is being closed): the next reconnection tries again.
    if (channels.size > 0) subscriber.subscribe(...channels).catch(() => undefined);
  });
  return subscriber;
}

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
    channelsOf.get(subscriber)?.add(channel);
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
