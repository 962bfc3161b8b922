import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';
import type { Redis } from 'ioredis';
import { ioredis } from './peers.js';
import type { Logger } from 'pino';
import type { CacheStore } from '../cache/index.js';
import type { ResolvedRedisCacheSettings } from './settings.js';

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

/** First byte of a stored value: how the rest is encoded. */
const RAW = 0;
const GZIP = 1;

/** Deletes a tag's members and the tag set itself, in one step, so no other instance sees half a drop. */
const DROP_TAG = `
local members = redis.call('SMEMBERS', KEYS[1])
for i = 1, #members, 500 do
  redis.call('DEL', unpack(members, i, math.min(i + 499, #members)))
end
redis.call('DEL', KEYS[1])
return #members`;

const LOG_INTERVAL_MS = 10_000;

/**
 * A {@link CacheStore} in Redis, shared by every gateway instance that uses the same Redis and prefix.
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
  readonly #redis: Redis;
  #lastLog = 0;

  constructor(settings: ResolvedRedisCacheSettings, logger: Logger) {
    this.#settings = settings;
    this.#logger = logger;
    this.#redis = new ioredis.Redis(settings.url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: settings.commandTimeoutMs,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    });
    this.#redis.defineCommand('dropTag', { numberOfKeys: 1, lua: DROP_TAG });
    this.#redis.on('error', (error: Error) => this.#warn(error, 'Redis cache store error'));
  }

  async open(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.#settings.connectTimeoutMs)));
    // Reconnection goes on by itself after a failed first connect; the cache serves misses meanwhile.
    await Promise.race([this.#redis.connect().catch((error: unknown) => this.#warn(error, 'Redis cache store not reachable at start; serving misses until it is')), timeout]);
    clearTimeout(timer);
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
    const batch = this.#redis.multi().set(full, stored, 'PX', Math.max(1, Math.round(ttlMs)));
    if (tag !== undefined) {
      const tagKey = `${this.#settings.prefix}tag:${tag}`;
      // NX then GT: a new set gets the member's TTL; an existing one only ever lives longer.
      batch.sadd(tagKey, full).pexpire(tagKey, ttlMs, 'NX').pexpire(tagKey, ttlMs, 'GT');
    }
    await batch.exec();
  }

  async dropTag(tag: string): Promise<void> {
    await (this.#redis as Redis & { dropTag(key: string): Promise<number> }).dropTag(`${this.#settings.prefix}tag:${tag}`);
  }

  #warn(error: unknown, message: string): void {
    const now = Date.now();
    if (now - this.#lastLog < LOG_INTERVAL_MS) return;
    this.#lastLog = now;
    this.#logger.warn({ err: error }, message);
  }
}
