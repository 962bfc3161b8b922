import type { Redis } from 'ioredis';
import { apiKeyHash, recordOf, type ApiKeyRecord, type KeyChangeListener, type KeyChanges, type KeyRegistry, type StoredKey } from '../../core/index.js';
import type { RedisConnection } from './connection.js';

/** Cached lookups per instance, at most; past it the cache starts over. */
export const MAX_CACHED_KEYS = 50_000;

const FIELDS = ['id', 'plan', 'label', 'keyHash', 'keyHint', 'secretHash', 'settings', 'createdAt', 'updatedAt', 'revokedAt'] as const;

function fromFields(fields: Record<string, string>): StoredKey {
  return {
    id: fields.id!,
    plan: fields.plan!,
    keyHash: fields.keyHash!,
    keyHint: fields.keyHint ?? '',
    createdAt: Number(fields.createdAt),
    updatedAt: Number(fields.updatedAt),
    ...(fields.label === undefined ? {} : { label: fields.label }),
    ...(fields.secretHash === undefined ? {} : { secretHash: fields.secretHash }),
    ...(fields.settings === undefined ? {} : { settings: JSON.parse(fields.settings) as Record<string, unknown> }),
    ...(fields.revokedAt === undefined ? {} : { revokedAt: Number(fields.revokedAt) }),
  };
}

function pairs(list: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < list.length; i += 2) out[list[i]!] = list[i + 1]!;
  return out;
}

function toFields(values: Partial<Record<(typeof FIELDS)[number], unknown>>): string[] {
  const out: string[] = [];
  for (const name of FIELDS) {
    const value = values[name];
    if (value === undefined) continue;
    out.push(name, typeof value === 'string' ? value : name === 'settings' ? JSON.stringify(value) : String(value));
  }
  return out;
}

/**
 * API keys in Redis, shared by every instance: a hash per key (`<prefix>key:<id>`), an entry from the
 * SHA-256 of the API key to its id (`<prefix>keyhash:<hash>`) and the set of ids (`<prefix>keys`). Each
 * instance caches lookups for `keyCacheMs`; a change made through any instance is published on
 * `<prefix>keys:changed`, and every instance drops the cached entries it names at once.
 */
export class RedisKeyRegistry implements KeyRegistry {
  readonly #conn: RedisConnection;
  readonly #prefix: string;
  readonly #channel: string;
  readonly #cacheMs: number;
  readonly #cache = new Map<string, { record: ApiKeyRecord | undefined; until: number }>();
  readonly #listeners = new Set<KeyChangeListener>();
  #subscriber: Redis | undefined;

  constructor(connection: RedisConnection) {
    this.#conn = connection;
    this.#prefix = connection.settings.prefix;
    this.#channel = `${this.#prefix}keys:changed`;
    this.#cacheMs = connection.settings.keyCacheMs;
  }

  /** Subscribes to key changes made by any instance (its own included: they come back on the channel). */
  async start(): Promise<void> {
    const subscriber = this.#conn.client.duplicate({ enableOfflineQueue: true, lazyConnect: true });
    subscriber.on('error', () => { /* reported by the main connection; reconnects by itself */ });
    subscriber.on('message', (_channel: string, message: string) => {
      const hashes = message.split(',');
      for (const hash of hashes) this.#cache.delete(hash);
      this.#tell(hashes);
    });
    // After a reconnection, changes may have been missed: start over.
    let connected = false;
    subscriber.on('ready', () => {
      this.#cache.clear();
      if (connected) this.#tell(undefined);
      connected = true;
    });
    this.#subscriber = subscriber;
    await subscriber.connect();
    await subscriber.subscribe(this.#channel);
  }

  /** Calls `listener` with the hashes of the keys any instance changes (see `KeyStore.watch`). */
  watch(listener: KeyChangeListener): () => void {
    this.#listeners.add(listener);
    return () => { this.#listeners.delete(listener); };
  }

  #tell(hashes: readonly string[] | undefined): void {
    for (const listener of this.#listeners) listener(hashes);
  }

  /** Unsubscribes. */
  async stop(): Promise<void> {
    const subscriber = this.#subscriber;
    this.#subscriber = undefined;
    if (subscriber !== undefined) await subscriber.quit().catch(() => subscriber.disconnect());
  }

  find(apiKey: string): ApiKeyRecord | undefined | Promise<ApiKeyRecord | undefined> {
    const hash = apiKeyHash(apiKey);
    const cached = this.#cache.get(hash);
    const now = Date.now();
    if (cached !== undefined && (cached.until > now || !this.#conn.ready)) return cached.record;
    if (!this.#conn.ready) throw this.#conn.unavailable(`the key store (Redis at ${this.#conn.address}) is unreachable`);
    return this.#conn.client.tgLookup(`${this.#prefix}keyhash:${hash}`, `${this.#prefix}key:`).then(
      (fields) => {
        const record = fields === null ? undefined : recordOf(fromFields(pairs(fields)));
        if (this.#cacheMs > 0) {
          if (this.#cache.size >= MAX_CACHED_KEYS) this.#cache.clear();
          this.#cache.set(hash, { record, until: Date.now() + this.#cacheMs });
        }
        return record;
      },
      (error: unknown) => {
        this.#conn.failed(error);
        if (cached !== undefined) return cached.record;
        throw this.#conn.unavailable(`the key store (Redis at ${this.#conn.address}) is unreachable`);
      },
    );
  }

  async insert(key: StoredKey): Promise<boolean> {
    const inserted = await this.#conn.client.tgInsert(
      `${this.#prefix}key:${key.id}`,
      `${this.#prefix}keyhash:${key.keyHash}`,
      `${this.#prefix}keys`,
      key.id,
      ...toFields(key),
    );
    if (inserted === 1) await this.#announce([key.keyHash]);
    return inserted === 1;
  }

  async get(id: string): Promise<StoredKey | undefined> {
    const fields = await this.#conn.client.hgetall(`${this.#prefix}key:${id}`);
    return fields.id === undefined ? undefined : fromFields(fields);
  }

  async list(): Promise<StoredKey[]> {
    const ids = (await this.#conn.client.smembers(`${this.#prefix}keys`)).sort();
    const keys = await Promise.all(ids.map((id) => this.get(id)));
    return keys.filter((k): k is StoredKey => k !== undefined);
  }

  async update(id: string, changes: KeyChanges, now: number): Promise<StoredKey | undefined> {
    const fields = toFields({ ...changes, updatedAt: now });
    const [ok, previousHash] = await this.#conn.client.tgUpdate(`${this.#prefix}key:${id}`, `${this.#prefix}keyhash:`, changes.keyHash ?? '', ...fields);
    if (ok !== 1) return undefined;
    await this.#announce([previousHash, ...(changes.keyHash === undefined ? [] : [changes.keyHash])]);
    return this.get(id);
  }

  /** Drops the hashes from this instance's cache and tells the others to. */
  async #announce(hashes: string[]): Promise<void> {
    for (const hash of hashes) this.#cache.delete(hash);
    await this.#conn.client.publish(this.#channel, hashes.join(','));
  }
}
