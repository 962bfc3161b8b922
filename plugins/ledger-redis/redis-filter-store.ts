import { newFilterId, type FilterLimits, type FilterStore, type StoredFilter } from '../../core/store-api.js';
import type { RedisConnection } from './connection.js';

/**
 * KEYS: the key's filter index (a sorted set of ids by expiry), the new filter's hash. ARGV: now, idle
 * ms, most filters per key, spec, cursor, id. Drops expired ids, refuses at the bound (0), else stores
 * the filter with its expiry (1).
 */
const CREATE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[2], 'spec', ARGV[4], 'cursor', ARGV[5])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]), ARGV[6])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;

/**
 * A filter is live while its score in the index (its expiry, by the gateway's clock) is after now; Redis's
 * own expiry of the keys (the same idle time, by Redis's clock) only collects what nobody polls again.
 */
const EXPIRED = `
local expiry = tonumber(redis.call('ZSCORE', KEYS[1], ARGV[3]) or '0')
if expiry <= tonumber(ARGV[1]) then
  redis.call('ZREM', KEYS[1], ARGV[3])
  redis.call('DEL', KEYS[2])
  return true
end
return false`;

/** KEYS: index, filter. ARGV: now, idle ms, id. The filter's spec and cursor, its expiry pushed back; nil when gone. */
const TOUCH = `
local function expired() ${EXPIRED} end
if expired() then return false end
local found = redis.call('HMGET', KEYS[2], 'spec', 'cursor')
if not found[1] then redis.call('ZREM', KEYS[1], ARGV[3]) return false end
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]), ARGV[3])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return found`;

/** KEYS: index, filter. ARGV: now, idle ms, id, expected cursor, new cursor. Compare-and-set of the cursor: 1 when moved. */
const ADVANCE = `
local function expired() ${EXPIRED} end
if expired() then return 0 end
if redis.call('HGET', KEYS[2], 'cursor') ~= ARGV[4] then return 0 end
redis.call('HSET', KEYS[2], 'cursor', ARGV[5])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]), ARGV[3])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1`;

/** KEYS: index, filter. ARGV: now, idle ms (unused), id. 1 when the filter existed (and had not expired). */
const REMOVE = `
local function expired() ${EXPIRED} end
if expired() then return 0 end
redis.call('ZREM', KEYS[1], ARGV[3])
return redis.call('DEL', KEYS[2])`;

/**
 * The {@link FilterStore} in Redis, shared by every gateway instance: one hash per filter (its spec and
 * cursor, expiring after the idle time) and a sorted set per API key that bounds how many it holds.
 * Every key of one API key carries the hash tag `{<key id>}`, so each script touches one slot and runs on
 * a Redis Cluster as on a single server; the cursor's compare-and-set is one script, so two instances
 * answering polls of the same filter never deliver a change twice.
 */
export class RedisFilterStore implements FilterStore {
  readonly #conn: RedisConnection;
  readonly #prefix: string;

  constructor(connection: RedisConnection) {
    this.#conn = connection;
    this.#prefix = `${connection.settings.prefix}filter:`;
  }

  #keys(keyId: string, id: string): [string, string] {
    const tag = `{${keyId}}`;
    return [`${this.#prefix}${tag}`, `${this.#prefix}${tag}:${id}`];
  }

  /** See {@link FilterStore.create}. */
  async create(keyId: string, filter: StoredFilter, limits: FilterLimits, now: number): Promise<string | undefined> {
    const id = newFilterId();
    const made = await this.#conn.client.eval(CREATE, 2, ...this.#keys(keyId, id), now, limits.idleMs, limits.maxPerKey, filter.spec, filter.cursor, id);
    return made === 1 ? id : undefined;
  }

  /** See {@link FilterStore.touch}. */
  async touch(keyId: string, id: string, idleMs: number, now: number): Promise<StoredFilter | undefined> {
    const found = (await this.#conn.client.eval(TOUCH, 2, ...this.#keys(keyId, id), now, idleMs, id)) as [string, string] | null;
    return found === null ? undefined : { spec: found[0], cursor: found[1] };
  }

  /** See {@link FilterStore.advance}. */
  async advance(keyId: string, id: string, from: string, to: string, idleMs: number, now: number): Promise<boolean> {
    return (await this.#conn.client.eval(ADVANCE, 2, ...this.#keys(keyId, id), now, idleMs, id, from, to)) === 1;
  }

  /** See {@link FilterStore.remove}. */
  async remove(keyId: string, id: string, now: number): Promise<boolean> {
    return (await this.#conn.client.eval(REMOVE, 2, ...this.#keys(keyId, id), now, 0, id)) === 1;
  }
}
