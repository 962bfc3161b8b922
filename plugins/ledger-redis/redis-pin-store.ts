import { pinIdOf, type PinAddResult, type PinRecord, type PinSettlement, type PinSettleResult, type PinStore } from '../../core/store-api.js';
import type { RedisConnection } from './connection.js';
import { hashTag } from './key-names.js';

/**
 * What every script shares. KEYS: the key's pins (a hash by pin id, each `<bytes> <cid> <rest as JSON>`),
 * its CIDs (a hash by CID of `{pin id: bytes}` as JSON: the weight of a CID is its heaviest pin's, counted
 * once however many pins hold it), its stored bytes.
 */
const COMMON = `
local function entryOf(cid)
  local raw = redis.call('HGET', KEYS[2], cid)
  if raw then return cjson.decode(raw) end
  return {}
end
local function save(cid, entry)
  if next(entry) == nil then redis.call('HDEL', KEYS[2], cid) else redis.call('HSET', KEYS[2], cid, cjson.encode(entry)) end
end
local function weight(entry, except)
  local w = 0
  for id, b in pairs(entry) do if id ~= except and b > w then w = b end end
  return w
end
local function holds(entry)
  for id, _ in pairs(entry) do
    local v = redis.call('HGET', KEYS[1], id)
    if v and not string.find(v, '"status":"failed"', 1, true) then return 1 end
  end
  return 0
end
`;

/**
 * ARGV: pin id, CID, stored value, bytes, limit ('' for none). {0, total}: the key has that pin id;
 * {-1, total}: over the limit; {1, new total}: added.
 */
const ADD = `${COMMON}
local total = tonumber(redis.call('GET', KEYS[3]) or '0')
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return {0, total} end
local entry = entryOf(ARGV[2])
local bytes = tonumber(ARGV[4])
local grows = math.max(0, bytes - weight(entry, nil))
if ARGV[5] ~= '' and total + grows > tonumber(ARGV[5]) then return {-1, total} end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
entry[ARGV[1]] = bytes
save(ARGV[2], entry)
return {1, redis.call('INCRBY', KEYS[3], grows)}`;

/** ARGV: pin id. {removed value, whether the key still holds its CID}, or nil. */
const REMOVE = `${COMMON}
local found = redis.call('HGET', KEYS[1], ARGV[1])
if not found then return false end
local cid = string.match(found, '^%d+ (%S+) ')
redis.call('HDEL', KEYS[1], ARGV[1])
local entry = entryOf(cid)
local before = weight(entry, nil)
entry[ARGV[1]] = nil
save(cid, entry)
redis.call('DECRBY', KEYS[3], before - weight(entry, nil))
return {found, holds(entry)}`;

/**
 * ARGV: pin id, the settled pin's rest (JSON), its bytes, limit ('' for none), the states it may be in
 * (comma-separated, '' for any). {-3, total}: in another state; {-2, total}: no such pin; {-1, total}: the
 * new bytes would pass the limit; {1, new total, whether the key holds the CID}: settled.
 */
const SETTLE = `${COMMON}
local total = tonumber(redis.call('GET', KEYS[3]) or '0')
local found = redis.call('HGET', KEYS[1], ARGV[1])
if not found then return {-2, total} end
local old, cid, rest = string.match(found, '^(%d+) (%S+) (.*)$')
old = tonumber(old)
if ARGV[5] ~= '' then
  local status = cjson.decode(rest).status or 'pinned'
  if not string.find(',' .. ARGV[5] .. ',', ',' .. status .. ',', 1, true) then return {-3, total} end
end
local new = tonumber(ARGV[3])
local entry = entryOf(cid)
local others = weight(entry, ARGV[1])
local grows = math.max(others, new) - math.max(others, old)
if ARGV[4] ~= '' and grows > 0 and total + grows > tonumber(ARGV[4]) then return {-1, total} end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3] .. ' ' .. cid .. ' ' .. ARGV[2])
entry[ARGV[1]] = new
save(cid, entry)
return {1, redis.call('INCRBY', KEYS[3], grows), holds(entry)}`;

/** ARGV: CID. 1 when one of the key's pins of it holds it (is not failed). */
const HOLDS = `${COMMON}
return holds(entryOf(ARGV[1]))`;

/** KEYS: the keys that pin a CID (a set). ARGV: the asking key's id. 1 when another key is in it. */
const OTHERS = `
local n = redis.call('SCARD', KEYS[1])
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then n = n - 1 end
if n > 0 then return 1 end
return 0`;

/** What the hash holds of a pin after its bytes and CID. */
type StoredRest = Omit<PinRecord, 'keyId' | 'cid' | 'bytes'>;

function restOf(pin: PinRecord): string {
  const { keyId: _key, cid: _cid, bytes: _bytes, ...rest } = pin;
  return JSON.stringify(rest);
}

/** A pin as the hash holds it: its bytes and CID first (so the scripts read them without JSON), then the rest as JSON. */
function encode(pin: PinRecord): string {
  return `${pin.bytes} ${pin.cid} ${restOf(pin)}`;
}

function decode(keyId: string, value: string): PinRecord {
  const first = value.indexOf(' ');
  const second = value.indexOf(' ', first + 1);
  const rest = JSON.parse(value.slice(second + 1)) as StoredRest;
  return { keyId, cid: value.slice(first + 1, second), bytes: Number(value.slice(0, first)), ...rest };
}

/**
 * The {@link PinStore} in Redis, shared by every gateway instance. Under the API key's hash tag
 * `{<key id>}` (one slot: the quota check and the write are one script, on a Redis Cluster as on a single
 * server): a hash of the key's pins by pin id, a hash of the pins of each of its CIDs with their weights,
 * and a counter of its stored bytes. Apart: a set of the keys that pin each CID, under the CID's own tag,
 * written before a pin is recorded and cleared after it is removed, so a CID may look pinned by one more
 * key than it is, never by one fewer: a node is never told to drop content a key still pins.
 */
export class RedisPinStore implements PinStore {
  readonly #conn: RedisConnection;
  readonly #prefix: string;

  constructor(connection: RedisConnection) {
    this.#conn = connection;
    this.#prefix = connection.settings.prefix;
  }

  #keyNames(keyId: string): [string, string, string] {
    const tag = hashTag(keyId);
    return [`${this.#prefix}pinsof:${tag}`, `${this.#prefix}pincids:${tag}`, `${this.#prefix}pinweight:${tag}`];
  }

  #holders(cid: string): string {
    return `${this.#prefix}pinkeys:${hashTag(cid)}`;
  }

  /** Takes the key out of the CID's holders unless one of its pins of it holds it (checked again after, for a pin recorded meanwhile). */
  async #unhold(keyId: string, cid: string): Promise<void> {
    const client = this.#conn.client;
    const holds = async (): Promise<boolean> => (await client.eval(HOLDS, 3, ...this.#keyNames(keyId), cid)) === 1;
    if (await holds()) return;
    await client.srem(this.#holders(cid), keyId);
    if (await holds()) await client.sadd(this.#holders(cid), keyId);
  }

  /** See {@link PinStore.add}. */
  async add(pin: PinRecord, limitBytes: number | undefined): Promise<PinAddResult> {
    const client = this.#conn.client;
    const id = pinIdOf(pin);
    if (pin.status !== 'failed') await client.sadd(this.#holders(pin.cid), pin.keyId);
    const [outcome, total] = (await client.eval(ADD, 3, ...this.#keyNames(pin.keyId), id, pin.cid, encode(pin), pin.bytes, limitBytes ?? '')) as [number, number];
    if (outcome !== 1) await this.#unhold(pin.keyId, pin.cid);
    if (outcome === -1) return { ok: false, storedBytes: total };
    return { ok: true, added: outcome === 1, storedBytes: total };
  }

  /** See {@link PinStore.remove}. */
  async remove(keyId: string, pinId: string): Promise<PinRecord | undefined> {
    const found = (await this.#conn.client.eval(REMOVE, 3, ...this.#keyNames(keyId), pinId)) as [string, number] | null;
    if (found === null) return undefined;
    const pin = decode(keyId, found[0]);
    if (found[1] === 0) await this.#unhold(keyId, pin.cid);
    return pin;
  }

  /** See {@link PinStore.get}. */
  async get(keyId: string, pinId: string): Promise<PinRecord | undefined> {
    const found = await this.#conn.client.hget(this.#keyNames(keyId)[0], pinId);
    return found === null ? undefined : decode(keyId, found);
  }

  /** See {@link PinStore.pinsOf}. */
  async pinsOf(keyId: string, cid: string): Promise<PinRecord[]> {
    const [pins, cids] = this.#keyNames(keyId);
    const entry = await this.#conn.client.hget(cids, cid);
    const ids = entry === null ? [] : Object.keys(JSON.parse(entry) as Record<string, number>);
    if (ids.length === 0) return [];
    const values = await this.#conn.client.hmget(pins, ...ids);
    return sorted(values.filter((v): v is string => v !== null).map((v) => decode(keyId, v)));
  }

  /** See {@link PinStore.list}. */
  async list(keyId: string): Promise<PinRecord[]> {
    const all = await this.#conn.client.hgetall(this.#keyNames(keyId)[0]);
    return sorted(Object.values(all).map((value) => decode(keyId, value)));
  }

  /** See {@link PinStore.pinnedByOthers}. */
  async pinnedByOthers(keyId: string, cid: string): Promise<boolean> {
    return (await this.#conn.client.eval(OTHERS, 1, this.#holders(cid), keyId)) === 1;
  }

  /** See {@link PinStore.storedBytes}. */
  async storedBytes(keyId: string): Promise<number> {
    return Number((await this.#conn.client.get(this.#keyNames(keyId)[2])) ?? 0);
  }

  /** See {@link PinStore.settle}. */
  async settle(keyId: string, pinId: string, settlement: PinSettlement, limitBytes: number | undefined): Promise<PinSettleResult> {
    const client = this.#conn.client;
    const current = await this.get(keyId, pinId);
    if (current === undefined) return { ok: false, storedBytes: await this.storedBytes(keyId), missing: true };
    const { statusDetails: _dropped, ...kept } = current;
    const next: PinRecord = { ...kept, status: settlement.status, ...(settlement.statusDetails === undefined ? {} : { statusDetails: settlement.statusDetails }) };
    const bytes = settlement.bytes ?? current.bytes;
    // A failed pin holds nothing on the node: the key leaves the CID's set once no pin of it holds it,
    // and is in it again before a pin in progress is recorded (never one holder fewer than there are).
    if (settlement.status !== 'failed') await client.sadd(this.#holders(current.cid), keyId);
    const [outcome, total, holds] = (await client.eval(SETTLE, 3, ...this.#keyNames(keyId), pinId, restOf(next), bytes, limitBytes ?? '', (settlement.from ?? []).join(','))) as [number, number, number?];
    if (outcome !== 1 || holds === 0) await this.#unhold(keyId, current.cid);
    if (outcome === -2) return { ok: false, storedBytes: total, missing: true };
    if (outcome === -3) return { ok: false, storedBytes: total, moved: true };
    if (outcome === -1) return { ok: false, storedBytes: total };
    return { ok: true, storedBytes: total };
  }

}

function sorted(pins: PinRecord[]): PinRecord[] {
  return pins.sort((a, b) => a.createdAt - b.createdAt || (pinIdOf(a) < pinIdOf(b) ? -1 : pinIdOf(a) > pinIdOf(b) ? 1 : 0));
}
