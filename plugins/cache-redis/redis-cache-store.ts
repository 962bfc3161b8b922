import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';
import { ioredis } from './peers.js';
import { checkTopology, createRedisClient, topologyOf, type AnyRedis } from '../ledger-redis/client.js';
import { storeAddress } from '../ledger-redis/settings.js';
import type { Logger } from 'pino';
import type { CacheStore } from '../cache/index.js';
import type { ResolvedRedisCacheSettings } from './settings.js';

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

/** First byte of a stored value: how the rest is encoded. */
const RAW = 0;
const GZIP = 1;

/** Deletes a tag's members and the tag set itself, in one step, so no other instance sees half a drop (one Redis). */
const DROP_TAG = `
local members = redis.call('SMEMBERS', KEYS[1])
for i = 1, #members, 500 do
  redis.call('DEL', unpack(members, i, math.min(i + 499, #members)))
end
redis.call('DEL', KEYS[1])
return #members`;

/**
 * Takes a tag's members and deletes the tag set, in one step in the tag's slot (a Redis Cluster): the
 * members, in slots of their own, are deleted next, each by itself.
 */
const TAKE_TAG = `
local members = redis.call('SMEMBERS', KEYS[1])
redis.call('DEL', KEYS[1])
return members`;

const LOG_INTERVAL_MS = 10_000;

/**
 * A `CacheStore` in Redis, shared by every gateway instance that uses the same Redis and prefix.
 * Values above `compressAboveBytes` are gzip-compressed (node's zlib: no extra dependency, and a block or
 * a log list compresses several times); entries expire by Redis's own TTL, and a tag is a Redis set of
 * its members' keys, kept as long as its longest-lived member.
 *
 * Commands are never queued while Redis is unreachable and time out after `commandTimeoutMs`, so an
 * outage turns lookups into misses at once rather than holding calls.
 */
export class RedisCacheStore implements CacheStore {
  readonly #settings: ResolvedRedisCacheSettings;
  readonly #logger: Logger;
  readonly #redis: AnyRedis;
  readonly #cluster: boolean;
  #lastLog = 0;

  constructor(settings: ResolvedRedisCacheSettings, logger: Logger) {
    this.#settings = settings;
    this.#logger = logger;
    this.#cluster = topologyOf(settings) === 'cluster';
    this.#redis = createRedisClient(ioredis, settings, {
      commandTimeoutMs: settings.commandTimeoutMs,
      connectTimeoutMs: settings.connectTimeoutMs,
      autoPipelining: false,
      retryDelay: (attempt) => Math.min(attempt * 200, 2000),
    });
    this.#redis.defineCommand('dropTag', { numberOfKeys: 1, lua: DROP_TAG });
    this.#redis.defineCommand('takeTag', { numberOfKeys: 1, lua: TAKE_TAG });
    this.#redis.on('error', (error: Error) => this.#warn(error, 'Redis cache store error'));
  }

  async open(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.#settings.connectTimeoutMs)));
    // Reconnection goes on by itself after a failed first connect; the cache serves misses meanwhile.
    await Promise.race([this.#redis.connect().catch((error: unknown) => this.#warn(error, 'Redis cache store not reachable at start; serving misses until it is')), timeout]);
    clearTimeout(timer);
    if (this.#redis.status !== 'ready') return;
    try {
      await checkTopology(this.#redis, this.#settings, storeAddress(this.#settings), { single: 'plugins.cache-redis.url', cluster: 'plugins.cache-redis.cluster.nodes' });
    } catch (error) {
      this.#redis.disconnect();
      throw error;
    }
  }

  async close(): Promise<void> {
    this.#redis.disconnect();
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    const stored = await this.#redis.getBuffer(this.#settings.prefix + key);
    if (stored === null || stored.length === 0) return undefined;
    const body = stored.subarray(1);
    return stored[0] === GZIP ? gunzipAsync(body) : body;
  }

  async set(key: string, value: Uint8Array, ttlMs: number, tag?: string): Promise<void> {
    const compress = value.byteLength > this.#settings.compressAboveBytes;
    const body = compress ? await gzipAsync(value) : value;
    const stored = Buffer.concat([Buffer.of(compress ? GZIP : RAW), body]);
    const full = this.#settings.prefix + key;
    const px = Math.max(1, Math.round(ttlMs));
    const tagKey = `${this.#settings.prefix}tag:${tag}`;
    if (this.#cluster) {
      // The entry and its tag set live in different slots: no transaction spans them. A drop that runs
      // between the two writes misses this entry, as a drop just before a set does on one Redis.
      await this.#redis.set(full, stored, 'PX', px);
      if (tag !== undefined) await Promise.all([this.#redis.sadd(tagKey, full), this.#redis.pexpire(tagKey, px, 'NX'), this.#redis.pexpire(tagKey, px, 'GT')]);
      return;
    }
    const batch = this.#redis.multi().set(full, stored, 'PX', px);
    // NX then GT: a new set gets the member's TTL; an existing one only ever lives longer.
    if (tag !== undefined) batch.sadd(tagKey, full).pexpire(tagKey, px, 'NX').pexpire(tagKey, px, 'GT');
    await batch.exec();
  }

  async dropTag(tag: string): Promise<void> {
    const redis = this.#redis as AnyRedis & { dropTag(key: string): Promise<number>; takeTag(key: string): Promise<string[]> };
    const tagKey = `${this.#settings.prefix}tag:${tag}`;
    if (!this.#cluster) {
      await redis.dropTag(tagKey);
      return;
    }
    const members = await redis.takeTag(tagKey);
    await Promise.all(members.map((member) => redis.del(member)));
  }

  #warn(error: unknown, message: string): void {
    const now = Date.now();
    if (now - this.#lastLog < LOG_INTERVAL_MS) return;
    this.#lastLog = now;
    this.#logger.warn({ err: error }, message);
  }
}
