import type { PinAddResult, PinRecord, PinSettlement, PinSettleResult, PinStore } from '../../core/plugin-api.js';
import type { RedisConnection } from './connection.js';
import { hashTag } from './key-names.js';

/**
 * KEYS: the key's pins (a hash, field by CID), its stored bytes. ARGV: CID, stored value, bytes, limit
 * ('' for none). {0, total}: the key already pins it; {-1, total}: over the limit; {1, new total}: added.
 */
const ADD = `
local total = tonumber(redis.call('GET', KEYS[2]) or '0')
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return {0, total} end
if ARGV[4] ~= '' and total + tonumber(ARGV[3]) > tonumber(ARGV[4]) then return {-1, total} end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return {1, redis.call('INCRBY', KEYS[2], ARGV[3])}`;

/** KEYS: the key's pins, its stored bytes. ARGV: CID. The removed pin's stored value, or nil. */
const REMOVE = `
local found = redis.call('HGET', KEYS[1], ARGV[1])
if not found then return false end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('DECRBY', KEYS[2], string.match(found, '^(%d+) '))
return found`;

/** KEYS: the keys that pin a CID (a set). ARGV: the asking key's id. 1 when another key is in it. */
const OTHERS = `
local n = redis.call('SCARD', KEYS[1])
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then n = n - 1 end
if n > 0 then return 1 end
return 0`;

/**
 * KEYS: the key's pins, its stored bytes. ARGV: CID, the settled pin's rest (JSON), its bytes, limit ('' for
 * none). {-2, total}: no such pin; {-1, total}: the new bytes would pass the limit; {1, new total}: settled.
 */
const SETTLE = `
local total = tonumber(redis.call('GET', KEYS[2]) or '0')
local found = redis.call('HGET', KEYS[1], ARGV[1])
if not found then return {-2, total} end
local old = tonumber(string.match(found, '^(%d+) '))
local new = tonumber(ARGV[3])
if ARGV[4] ~= '' and new > old and total - old + new > tonumber(ARGV[4]) then return {-1, total} end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3] .. ' ' .. ARGV[2])
return {1, redis.call('INCRBY', KEYS[2], new - old)}`;

/** What the hash holds of a pin after its bytes. */
type StoredRest = Omit<PinRecord, 'keyId' | 'cid' | 'bytes'>;

function restOf(pin: PinRecord): string {
  const { keyId: _key, cid: _cid, bytes: _bytes, ...rest } = pin;
  return JSON.stringify(rest);
}

/** A pin as the hash holds it: its bytes first (so the scripts read them without JSON), then the rest as JSON. */
function encode(pin: PinRecord): string {
  return `${pin.bytes} ${restOf(pin)}`;
}

function decode(keyId: string, cid: string, value: string): PinRecord {
  const space = value.indexOf(' ');
  const rest = JSON.parse(value.slice(space + 1)) as StoredRest;
  return { keyId, cid, bytes: Number(value.slice(0, space)), ...rest };
}

/**
 * The {@link PinStore} in Redis, shared by every gateway instance: a hash of each API key's pins and a
 * counter of its stored bytes, both under the key's hash tag `{<key id>}` (one slot: the quota check and
 * the write are one script, on a Redis Cluster as on a single server), and a set of the keys that pin
 * each CID, under the CID's own tag. The set is written before a pin is recorded and cleared after it is
 * removed, so between the two steps a CID may look pinned by one more key than it is, never by one fewer:
 * a node is never told to drop content a key still pins.
 */
export class RedisPinStore implements PinStore {
  readonly #conn: RedisConnection;
  readonly #prefix: string;

  constructor(connection: RedisConnection) {
    this.#conn = connection;
    this.#prefix = connection.settings.prefix;
  }

  #keyNames(keyId: string): [string, string] {
    const tag = hashTag(keyId);
    return [`${this.#prefix}pins:${tag}`, `${this.#prefix}pinbytes:${tag}`];
  }

  #holders(cid: string): string {
    return `${this.#prefix}pinkeys:${hashTag(cid)}`;
  }

  /** See {@link PinStore.add}. */
  async add(pin: PinRecord, limitBytes: number | undefined): Promise<PinAddResult> {
    const client = this.#conn.client;
    if (pin.status !== 'failed') await client.sadd(this.#holders(pin.cid), pin.keyId);
    const [outcome, total] = (await client.eval(ADD, 2, ...this.#keyNames(pin.keyId), pin.cid, encode(pin), pin.bytes, limitBytes ?? '')) as [number, number];
    if (outcome === -1) {
      await client.srem(this.#holders(pin.cid), pin.keyId);
      return { ok: false, storedBytes: total };
    }
    return { ok: true, added: outcome === 1, storedBytes: total };
  }

  /** See {@link PinStore.remove}. */
  async remove(keyId: string, cid: string): Promise<PinRecord | undefined> {
    const found = (await this.#conn.client.eval(REMOVE, 2, ...this.#keyNames(keyId), cid)) as string | null;
    if (found === null) return undefined;
    await this.#conn.client.srem(this.#holders(cid), keyId);
    return decode(keyId, cid, found);
  }

  /** See {@link PinStore.get}. */
  async get(keyId: string, cid: string): Promise<PinRecord | undefined> {
    const found = await this.#conn.client.hget(this.#keyNames(keyId)[0], cid);
    return found === null ? undefined : decode(keyId, cid, found);
  }

  /** See {@link PinStore.list}. */
  async list(keyId: string): Promise<PinRecord[]> {
    const all = await this.#conn.client.hgetall(this.#keyNames(keyId)[0]);
    return Object.entries(all)
      .map(([cid, value]) => decode(keyId, cid, value))
      .sort((a, b) => a.createdAt - b.createdAt || (a.cid < b.cid ? -1 : a.cid > b.cid ? 1 : 0));
  }

  /** See {@link PinStore.pinnedByOthers}. */
  async pinnedByOthers(keyId: string, cid: string): Promise<boolean> {
    return (await this.#conn.client.eval(OTHERS, 1, this.#holders(cid), keyId)) === 1;
  }

  /** See {@link PinStore.storedBytes}. */
  async storedBytes(keyId: string): Promise<number> {
    return Number((await this.#conn.client.get(this.#keyNames(keyId)[1])) ?? 0);
  }

  /** See {@link PinStore.byRequest}; reads the key's pins (a key's pin requests are not indexed apart). */
  async byRequest(keyId: string, requestId: string): Promise<PinRecord | undefined> {
    return (await this.list(keyId)).find((pin) => pin.requestId === requestId);
  }

  /** See {@link PinStore.settle}. */
  async settle(keyId: string, cid: string, settlement: PinSettlement, limitBytes: number | undefined): Promise<PinSettleResult> {
    const current = await this.get(keyId, cid);
    if (current === undefined) return { ok: false, storedBytes: await this.storedBytes(keyId), missing: true };
    const { statusDetails: _dropped, ...kept } = current;
    const next: PinRecord = { ...kept, status: settlement.status, ...(settlement.statusDetails === undefined ? {} : { statusDetails: settlement.statusDetails }) };
    const bytes = settlement.bytes ?? current.bytes;
    // A failed pin holds nothing on the node: the key leaves the CID's set once its pin has failed, and
    // is in it again before a pin in progress is recorded (never one holder fewer than there are).
    const failing = settlement.status === 'failed';
    if (!failing) await this.#conn.client.sadd(this.#holders(cid), keyId);
    const [outcome, total] = (await this.#conn.client.eval(SETTLE, 2, ...this.#keyNames(keyId), cid, restOf(next), bytes, limitBytes ?? '')) as [number, number];
    if (outcome === -2) {
      // No such pin: the key holds nothing of the CID.
      await this.#conn.client.srem(this.#holders(cid), keyId);
      return { ok: false, storedBytes: total, missing: true };
    }
    if (outcome === -1) return { ok: false, storedBytes: total };
    if (failing) await this.#conn.client.srem(this.#holders(cid), keyId);
    return { ok: true, storedBytes: total };
  }
}
