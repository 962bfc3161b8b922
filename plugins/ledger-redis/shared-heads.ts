import type { Logger } from 'pino';
import type { HeadKey, HeadListener, SharedHeads } from '../../core/store-api.js';
import { ioredis } from './peers.js';
import { createRedisClient, type AnyRedis } from './client.js';
import { storeAddress, type ResolvedRedisSettings } from './settings.js';
import { readyWithin, retryUntil } from './start-deadline.js';
import { subscribeWithin, subscriberBeside } from './subscribe-within.js';

/**
 * Raises a head: `KEYS[1]` is the network's hash (field: the scope), `ARGV` the scope, the head, the
 * channel and the message. Sets and publishes only when the head is higher than the stored one, so
 * concurrent offers from several instances leave the highest and announce each rise once.
 */
export const RAISE_HEAD = `
local current = redis.call('HGET', KEYS[1], ARGV[1])
if current and tonumber(current) >= tonumber(ARGV[2]) then return tonumber(current) end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PUBLISH', ARGV[3], ARGV[4])
return tonumber(ARGV[2])
`;

type HeadsClient = AnyRedis & { tgRaiseHead(hash: string, scope: string, head: number, channel: string, message: string): Promise<number> };

/**
 * {@link SharedHeads} through Redis, for several gateway instances: each network's heads live in one
 * hash, `<prefix>{head:<network>}` (one hash tag per network, so a Redis Cluster keeps each in one slot),
 * raised by an atomic script that publishes every rise on `<prefix>heads`. Every instance subscribes and
 * keeps the heads in memory: calls read them locally, never from Redis. On start, and after every
 * reconnection (a rise published meanwhile was missed), the stored heads are read again.
 *
 * A failed offer (Redis down) is logged and dropped: the instance's own floor still holds, and the next
 * rise offers a higher head anyway.
 */
export class RedisSharedHeads implements SharedHeads {
  readonly #settings: ResolvedRedisSettings;
  readonly #logger: Logger | undefined;
  readonly #listeners: HeadListener[] = [];
  readonly #known = new Map<string, number>();
  readonly #channel: string;
  #networks: readonly string[] = [];
  #client: HeadsClient | undefined;
  #subscriber: AnyRedis | undefined;

  constructor(settings: ResolvedRedisSettings, logger?: Logger) {
    this.#settings = settings;
    this.#logger = logger;
    this.#channel = `${settings.prefix}heads`;
  }

  /** The hash holding `network`'s heads. */
  hashOf(network: string): string {
    return `${this.#settings.prefix}{head:${network}}`;
  }

  /** Adds a listener of rises. */
  onRaise(listener: HeadListener): void {
    this.#listeners.push(listener);
  }

  /** Raises the local head at once, and the shared one in Redis (which tells the other instances). */
  offer(key: HeadKey, head: number): void {
    if (!Number.isSafeInteger(head) || head < 0 || !this.#learn(key, head)) return;
    this.#write(key, head);
  }

  /** Writes a head to Redis; before the connection is up, {@link RedisSharedHeads.start} writes it. */
  #write(key: HeadKey, head: number): void {
    const client = this.#client;
    if (client === undefined || client.status !== 'ready') return;
    const message = JSON.stringify({ network: key.network, scope: key.scope, head });
    client.tgRaiseHead(this.hashOf(key.network), key.scope, head, this.#channel, message).catch((error: Error) => {
      this.#logger?.debug({ network: key.network, scope: key.scope, head, reason: error.message }, 'shared head not written');
    });
  }

  /** Connects, subscribes to rises and loads the stored heads of `networks`. */
  async start(networks: readonly string[]): Promise<void> {
    this.#networks = networks;
    // One Redis, Sentinel or a Cluster, as the store's own connection: the heads live where the balances do.
    const client = createRedisClient(ioredis, this.#settings, {
      commandTimeoutMs: this.#settings.commandTimeoutMs,
      connectTimeoutMs: this.#settings.connectTimeoutMs,
      autoPipelining: false,
      retryDelay: (attempt: number) => Math.min(50 * 2 ** Math.min(attempt, 5), 1000),
    }) as HeadsClient;
    client.defineCommand('tgRaiseHead', { numberOfKeys: 1, lua: RAISE_HEAD });
    const subscriber: AnyRedis = subscriberBeside(client);
    this.#client = client;
    this.#subscriber = subscriber;
    for (const connection of [client, subscriber]) connection.on('error', (error: Error) => this.#logger?.debug({ reason: error.message }, 'shared heads connection error'));
    subscriber.on('message', (channel: string, message: string) => {
      if (channel === this.#channel) this.#heard(message);
    });
    // Retried until startTimeoutMs, as the store's own start: a Cluster slow to answer delays the start.
    const deadline = Date.now() + this.#settings.startTimeoutMs;
    const address = storeAddress(this.#settings);
    await Promise.all([
      retryUntil(`cannot reach Redis at ${address} for the shared heads`, deadline, 'startTimeoutMs', (left) => readyWithin(client, Math.min(left, this.#settings.connectTimeoutMs), address), this.#logger),
      retryUntil(`cannot subscribe to "${this.#channel}" on Redis at ${address}`, deadline, 'startTimeoutMs', (left) => subscribeWithin(subscriber, this.#channel, Math.min(left, this.#settings.connectTimeoutMs), address), this.#logger),
    ]);
    await retryUntil(`cannot read the shared heads on Redis at ${address}`, deadline, 'startTimeoutMs', () => this.#sync(), this.#logger);
    // While the connection was down, rises published were missed and offers were dropped: sync again.
    client.on('ready', () => void this.#sync().catch(() => undefined));
  }

  /** Reads the stored heads, then writes those known here that are higher (offered before the connection was up). */
  async #sync(): Promise<void> {
    await this.#load();
    for (const [id, head] of this.#known) {
      const [network, scope] = id.split('\u0000') as [string, string];
      this.#write({ network, scope }, head);
    }
  }

  /** Unsubscribes and closes both connections. */
  async stop(): Promise<void> {
    const connections = [this.#client, this.#subscriber];
    this.#client = undefined;
    this.#subscriber = undefined;
    await Promise.allSettled(connections.map((c) => (c?.status === 'ready' ? c.quit() : c?.disconnect())));
  }

  async #load(): Promise<void> {
    const client = this.#client;
    if (client === undefined) return;
    for (const network of this.#networks) {
      const stored = await client.hgetall(this.hashOf(network));
      for (const [scope, value] of Object.entries(stored)) {
        const head = Number(value);
        if (Number.isSafeInteger(head)) this.#learn({ network, scope }, head);
      }
    }
  }

  #heard(message: string): void {
    try {
      const { network, scope, head } = JSON.parse(message) as { network?: unknown; scope?: unknown; head?: unknown };
      if (typeof network === 'string' && typeof scope === 'string' && typeof head === 'number' && Number.isSafeInteger(head)) this.#learn({ network, scope }, head);
    } catch {
      // Not one of ours: ignored.
    }
  }

  /** Keeps `head` when it is higher than the known one and tells the listeners; returns whether it rose. */
  #learn(key: HeadKey, head: number): boolean {
    const id = `${key.network}\u0000${key.scope}`;
    const known = this.#known.get(id);
    if (known !== undefined && known >= head) return false;
    this.#known.set(id, head);
    for (const listener of this.#listeners) listener(key, head);
    return true;
  }
}
