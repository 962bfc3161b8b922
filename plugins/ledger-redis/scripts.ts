/**
 * The Lua scripts of the Redis store. Each runs atomically inside Redis, so no read-modify-write race
 * exists between gateway instances: a check and the change it guards are one step.
 *
 * Every write of a debit is keyed on the debit's id through a marker key (`<prefix>once:<id>`) that lives
 * for the idempotency window: the debit's credits once it was taken, `r` once it was refunded or
 * cancelled. A debit that finds a marker, or a refund that finds `r`, changes nothing, so a command that
 * timed out and runs late, or is sent again, is applied at most once. Settlements and usage batches
 * carry an id of their own, kept the same way.
 */

/**
 * KEYS: balance, debit marker. ARGV: credits, daily limit, time to live (ms), idempotency window (ms).
 * Takes the credits if they fit: `{1, used}` or `{0, used}`; `{2, used}` when the debit's id was already
 * taken or cancelled (nothing changes).
 */
export const DEBIT = `
if redis.call('EXISTS', KEYS[2]) == 1 then return {2, tonumber(redis.call('GET', KEYS[1]) or '0')} end
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local credits = tonumber(ARGV[1])
if used + credits > tonumber(ARGV[2]) then return {0, used} end
used = redis.call('INCRBY', KEYS[1], credits)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[4])
return {1, used}`;

/**
 * KEYS: balance, batch marker. ARGV: credits, time to live (ms), idempotency window (ms). Adds credits
 * spent while Redis was unreachable, whatever the limit, once per batch id: the new use, or -1 when that
 * batch was already added.
 */
export const SETTLE = `
if not redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[3]) then return -1 end
local used = redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return used`;

/**
 * KEYS: balance, debit marker. ARGV: credits, whether the debit is known to have been taken (1|0),
 * idempotency window (ms). Gives a debit back once: never below zero, never re-creating an expired day.
 * A debit whose outcome is unknown (its command timed out) and that Redis has not seen is cancelled
 * instead: its marker makes it a no-op should it still arrive.
 */
export const REFUND = `
local mark = redis.call('GET', KEYS[2])
if mark == 'r' then return 0 end
redis.call('SET', KEYS[2], 'r', 'PX', ARGV[3])
if not mark and ARGV[2] ~= '1' then return 0 end
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local used = redis.call('DECRBY', KEYS[1], ARGV[1])
if used < 0 then
  redis.call('SET', KEYS[1], '0', 'KEEPTTL')
  return 0
end
return used`;

/**
 * The token bucket shared by {@link TAKE} and {@link TAKE_DEBIT}. KEYS[1]: bucket. ARGV[1..4]: cost,
 * tokens per second, burst, now (ms). Refills for the time passed since the bucket's last use, then
 * takes `min(cost, burst)` tokens if it holds them (`allowed`); idle buckets expire once they would be
 * full again. Leaves `tokens`, `need` and `rate` for the caller's answer.
 */
const BUCKET = `
local cost = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local now = tonumber(ARGV[4])
local state = redis.call('HMGET', KEYS[1], 't', 'a')
local tokens = tonumber(state[1])
local at = tonumber(state[2])
if tokens == nil or at == nil then
  tokens = burst
  at = now
elseif now > at then
  tokens = math.min(burst, tokens + (now - at) / 1000 * rate)
  at = now
end
local need = math.min(cost, burst)
local allowed = tokens >= need
if allowed then
  tokens = tokens - need
  redis.call('HSET', KEYS[1], 't', string.format('%.17g', tokens), 'a', string.format('%d', at))
  redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
end`;

/**
 * KEYS: bucket. ARGV: cost, tokens per second, burst, now (ms). Takes from the token bucket
 * (the shared bucket fragment): `{1, 0}` or `{0, retry after ms}`.
 */
export const TAKE = `${BUCKET}
if allowed then return {1, 0} end
return {0, math.ceil((need - tokens) / rate * 1000)}`;

/**
 * KEYS: usage hash of a key and day, batch marker. ARGV: time to live (ms), idempotency window (ms), then
 * groups of seven: method, calls, credits, bytes, failed, cache hits, cache misses. Adds the totals to
 * fields `<method>|calls` and so on (`|cacheHits`, `|cacheMisses`), once per batch id: 0 when that batch
 * was already added.
 */
export const USAGE = `
if not redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[2]) then return 0 end
for i = 3, #ARGV, 7 do
  local method = ARGV[i]
  redis.call('HINCRBY', KEYS[1], method .. '|calls', ARGV[i + 1])
  if ARGV[i + 2] ~= '0' then redis.call('HINCRBY', KEYS[1], method .. '|credits', ARGV[i + 2]) end
  if ARGV[i + 3] ~= '0' then redis.call('HINCRBY', KEYS[1], method .. '|bytes', ARGV[i + 3]) end
  if ARGV[i + 4] ~= '0' then redis.call('HINCRBY', KEYS[1], method .. '|failed', ARGV[i + 4]) end
  if ARGV[i + 5] ~= '0' then redis.call('HINCRBY', KEYS[1], method .. '|cacheHits', ARGV[i + 5]) end
  if ARGV[i + 6] ~= '0' then redis.call('HINCRBY', KEYS[1], method .. '|cacheMisses', ARGV[i + 6]) end
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1`;

/** KEYS: key-hash entry. ARGV: prefix of key records. The record's fields of the key with that hash, or nil. */
export const LOOKUP = `
local id = redis.call('GET', KEYS[1])
if not id then return false end
return redis.call('HGETALL', ARGV[1] .. id)`;

/** KEYS: record, key-hash entry, id set. ARGV: id, then field/value pairs. Adds a key unless its id or hash exists. */
export const INSERT = `
if redis.call('EXISTS', KEYS[1]) == 1 or redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('SET', KEYS[2], ARGV[1])
redis.call('SADD', KEYS[3], ARGV[1])
return 1`;

/**
 * KEYS: record. ARGV: prefix of key-hash entries, new key hash or '', then field/value pairs. Changes a
 * key, moving its hash entry on rotation. `{1, previous hash}` or `{0, ''}` when there is no such key.
 */
export const UPDATE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return {0, ''} end
local old = redis.call('HGET', KEYS[1], 'keyHash') or ''
if ARGV[2] ~= '' then
  if old ~= '' then redis.call('DEL', ARGV[1] .. old) end
  redis.call('SET', ARGV[1] .. ARGV[2], redis.call('HGET', KEYS[1], 'id'))
end
if #ARGV > 2 then redis.call('HSET', KEYS[1], unpack(ARGV, 3)) end
return {1, old}`;

/**
 * KEYS: bucket, balance, debit marker. ARGV: cost, tokens per second, burst, now (ms), credits, daily
 * limit, time to live of the balance (ms), idempotency window (ms). {@link TAKE} and then, if the bucket
 * let the call through, {@link DEBIT}, in one atomic step: `{1, 0, 1|0|2, used}` or `{0, retry after ms, 0, 0}`.
 */
export const TAKE_DEBIT = `${BUCKET}
if not allowed then return {0, math.ceil((need - tokens) / rate * 1000), 0, 0} end
if redis.call('EXISTS', KEYS[3]) == 1 then return {1, 0, 2, tonumber(redis.call('GET', KEYS[2]) or '0')} end
local used = tonumber(redis.call('GET', KEYS[2]) or '0')
local credits = tonumber(ARGV[5])
if used + credits > tonumber(ARGV[6]) then return {1, 0, 0, used} end
used = redis.call('INCRBY', KEYS[2], credits)
redis.call('PEXPIRE', KEYS[2], ARGV[7])
redis.call('SET', KEYS[3], ARGV[5], 'PX', ARGV[8])
return {1, 0, 1, used}`;
