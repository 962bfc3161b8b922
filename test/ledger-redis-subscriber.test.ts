/**
 * The store's pub/sub connections across a Redis restart: subscribed again after the reconnection by the
 * store itself (ioredis's own resubscription is off: its SUBSCRIBE had no handler, so a stop that closed
 * the connection before Redis answered it ended the process with an unhandled "Connection is closed.",
 * seen in the suite as a failed ledger-redis stop test). One subscriber is closed at the earliest moment
 * after it is back (whether its SUBSCRIBE is answered first is up to the scheduler): nothing may be left
 * unhandled; the other must hear a message published after the restart.
 */
import t from 'tap';
import { Redis } from 'ioredis';
import { subscribeWithin, subscriberBeside } from '../plugins/ledger-redis/subscribe-within.js';
import { redisAvailable, startRedisServer } from './helpers/redis-server.js';
import { until } from './helpers/until.js';

if (!(await redisAvailable())) {
  t.fail('redis-server is not installed (apt-get install redis-server)');
  process.exit(1);
}
const redis = await startRedisServer();
t.teardown(() => redis.stop());

t.test('a subscriber closed as it reconnects: no unhandled rejection; one left open hears messages again', async (t) => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => { unhandled.push(reason); };
  process.on('unhandledRejection', onUnhandled);
  t.teardown(() => { process.off('unhandledRejection', onUnhandled); });
  const client = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
  client.on('error', () => {});
  await client.connect();
  t.teardown(() => client.disconnect());
  const closing = subscriberBeside(client);
  const staying = subscriberBeside(client);
  const heard: string[] = [];
  for (const s of [closing, staying]) s.on('error', () => {});
  staying.on('message', (_channel: string, message: string) => heard.push(message));
  await subscribeWithin(closing, 'tg-changes', 5_000, redis.url);
  await subscribeWithin(staying, 'tg-changes', 5_000, redis.url);
  t.teardown(() => staying.disconnect());

  await redis.restart();
  // Closed the moment it is back, before Redis can answer the SUBSCRIBE of the reconnection.
  await new Promise<void>((resolve) => closing.once('ready', () => { closing.disconnect(); resolve(); }));
  await until('the other subscriber is back', () => staying.status === 'ready');
  await until('a message published after the restart is heard', async () => {
    await client.publish('tg-changes', 'after-restart');
    return heard.includes('after-restart');
  });
  t.same(unhandled.map((reason) => String((reason as Error)?.message ?? reason)), [], 'no unhandled rejection');
});
