import { apiKeyHash, recordOf, type ApiKeyRecord, type KeyChanges, type KeyRegistry, type StoredKey, type KeyChangeListener } from '../../core/store-api.js';
import type { RedisConnection } from './connection.js';
import type { AnyRedis } from './client.js';
import type { RedisKeyNames } from './key-names.js';
import { subscriberBeside } from './subscribe-within.js';

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
 * API keys in Redis, shared by every instance: a hash per key (`<prefix>key:{<id>}`, the key's record
 * and the one source of truth), an entry from the SHA-256 of the API key to its id
 * (`<prefix>keyhash:{<hash>}`) and the set of ids (`<prefix>keys`). Each lives in a hash slot of its own
 * on a Redis Cluster, so no script spans two of them; the record decides:
 *
 * - a lookup follows the hash entry to the record and accepts it only if the record's own `keyHash` is
 *   the hash looked up, so an entry left behind (by a create that stopped halfway, or by a rotation)
 *   leads nowhere;
 * - create writes the id into the set, claims the hash entry, then writes the record last: until the
 *   record exists, nothing answers to the new key;
 * - rotation claims the new hash's entry, then changes the record's `keyHash` (the switch: from then
 *   on the new key works and the old one does not), then removes the old entry;
 * - revocation is one write to the record.
 *
 * Each instance caches lookups for `keyCacheMs`; a change made through any instance is published on
 * `<prefix>keys:changed`, and every instance drops the cached entries it names at once.
 */
export class RedisKeyRegistry implements KeyRegistry {
  readonly #conn: RedisConnection;
  readonly #names: RedisKeyNames;
  readonly #cacheMs: number;
  readonly #cache = new Map<string, { record: ApiKeyRecord | undefined; until: number }>();
  readonly #listeners = new Set<KeyChangeListener>();
  #subscriber: AnyRedis | undefined;

  constructor(connection: RedisConnection) {
    this.#conn = connection;
    this.#names = connection.names;
    this.#cacheMs = connection.settings.keyCacheMs;
  }

  /**
   * Subscribes to key changes made by any instance (its own included: they come back on the channel).
   *
   * @param deadline - `Date.now()` time until which a slow Redis is retried (default: `startTimeoutMs` from now).
   */
  async start(deadline = Date.now() + this.#conn.settings.startTimeoutMs): Promise<void> {
    // Subscribed even without a cache: open connections of a revoked or rotated key are closed on the news.
    const client = this.#conn.client;
    const subscriber = subscriberBeside(client);
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
    await this.#conn.subscribeAtStart(subscriber, this.#names.changes, deadline);
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
    return this.#lookup(hash).then(
      (key) => {
        const record = key === undefined ? undefined : recordOf(key);
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

  /** The key whose record carries `hash` (see the class comment: an entry the record disowns is no key). */
  async #lookup(hash: string): Promise<StoredKey | undefined> {
    const id = await this.#conn.client.get(this.#names.keyHash(hash));
    if (id === null) return undefined;
    const key = await this.get(id);
    return key?.keyHash === hash ? key : undefined;
  }

  async insert(key: StoredKey): Promise<boolean> {
    const client = this.#conn.client;
    await client.sadd(this.#names.ids, key.id);
    if (!(await this.#claim(key.keyHash, key.id))) return false;
    const inserted = await client.tgInsert(this.#names.record(key.id), key.keyHash, ...toFields(key));
    if (inserted !== 1) {
      // The id is taken by another key: give the hash entry back (the record, which wins, disowns it anyway).
      await client.tgReleaseHash(this.#names.keyHash(key.keyHash), key.id);
      return false;
    }
    await this.#announce([key.keyHash]);
    return true;
  }

  /**
   * Points `hash`'s entry at `id`: false when it points at another key that owns the hash (the same API
   * key exists). An entry whose key does not own the hash (left by a create that stopped halfway, or by
   * a rotation) is taken over, atomically against anyone who changed it meanwhile.
   */
  async #claim(hash: string, id: string): Promise<boolean> {
    const entry = this.#names.keyHash(hash);
    if ((await this.#conn.client.tgClaimHash(entry, id, '')) === 1) return true;
    const holder = await this.#conn.client.get(entry);
    if (holder === null) return (await this.#conn.client.tgClaimHash(entry, id, '')) === 1;
    if ((await this.#conn.client.hget(this.#names.record(holder), 'keyHash')) === hash) return false;
    return (await this.#conn.client.tgClaimHash(entry, id, holder)) === 1;
  }

  async get(id: string): Promise<StoredKey | undefined> {
    const fields = await this.#conn.client.hgetall(this.#names.record(id));
    return fields.id === undefined ? undefined : fromFields(fields);
  }

  async list(): Promise<StoredKey[]> {
    const ids = (await this.#conn.client.smembers(this.#names.ids)).sort();
    // An id whose record was never written (a create that stopped halfway) is no key.
    const keys = await Promise.all(ids.map((id) => this.get(id)));
    return keys.filter((k): k is StoredKey => k !== undefined);
  }

  async update(id: string, changes: KeyChanges, now: number): Promise<StoredKey | undefined> {
    const client = this.#conn.client;
    const rotating = changes.keyHash;
    if (rotating !== undefined && !(await this.#claim(rotating, id))) throw new Error('the new API key is already in use');
    const [ok, previousHash] = await client.tgUpdate(this.#names.record(id), ...toFields({ ...changes, updatedAt: now }));
    if (ok !== 1) {
      if (rotating !== undefined) await client.tgReleaseHash(this.#names.keyHash(rotating), id);
      return undefined;
    }
    if (rotating !== undefined && previousHash !== '' && previousHash !== rotating) await client.tgReleaseHash(this.#names.keyHash(previousHash), id);
    await this.#announce([previousHash, ...(rotating === undefined ? [] : [rotating])]);
    return this.get(id);
  }

  /** Drops the hashes from this instance's cache and tells the others to. */
  async #announce(hashes: string[]): Promise<void> {
    for (const hash of hashes) this.#cache.delete(hash);
    await this.#conn.client.publish(this.#names.changes, hashes.join(','));
  }
}
