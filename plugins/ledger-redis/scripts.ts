/**
 * The Lua scripts of the Redis store. Each runs atomically inside Redis, so no read-modify-write race
 * exists between gateway instances: a check and the change it guards are one step.
 */

/** KEYS: balance. ARGV: credits, daily limit, time to live (ms). Takes the credits if they fit: `{1, used}` or `{0, used}`. */
export const DEBIT = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local credits = tonumber(ARGV[1])
if used + credits > tonumber(ARGV[2]) then return {0, used} end
used = redis.call('INCRBY', KEYS[1], credits)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {1, used}`;

/** KEYS: balance. ARGV: credits, time to live (ms). Adds credits spent while Redis was unreachable, whatever the limit. */
export const SETTLE = `
local used = redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return used`;

/** KEYS: balance. ARGV: credits. Gives credits back, never below zero, never re-creating an expired day. */
export const REFUND = `
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
 * KEYS: usage hash of a key and day. ARGV: time to live (ms), then groups of five: method, calls, credits, bytes,
 * failed. Adds the totals to fields `<method>|calls` and so on.
 */
export const USAGE = `
for i = 2, #ARGV, 5 do
  local method = ARGV[i]
  redis.call('HINCRBY', KEYS[1], method .. '|calls', ARGV[i + 1])
  if ARGV[i + 2] ~= '0' then redis.call('HINCRBY', KEYS[1], method .. '|credits', ARGV[i + 2]) end
  if ARGV[i + 3] ~= '0' then redis.call('HINCRBY', KEYS[1], method .. '|bytes', ARGV[i + 3]) end
  if ARGV[i + 4] ~= '0' then redis.call('HINCRBY', KEYS[1], method .. '|failed', ARGV[i + 4]) end
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
 * KEYS: bucket, balance. ARGV: cost, tokens per second, burst, now (ms), credits, daily limit, time to
 * live of the balance (ms). {@link TAKE} and then, if the bucket let the call through, {@link DEBIT}, in
 * one atomic step: `{1, 0, 1|0, used}` or `{0, retry after ms, 0, 0}`.
 */
export const TAKE_DEBIT = `${BUCKET}
if not allowed then return {0, math.ceil((need - tokens) / rate * 1000), 0, 0} end
local used = tonumber(redis.call('GET', KEYS[2]) or '0')
local credits = tonumber(ARGV[5])
if used + credits > tonumber(ARGV[6]) then return {1, 0, 0, used} end
used = redis.call('INCRBY', KEYS[2], credits)
redis.call('PEXPIRE', KEYS[2], ARGV[7])
return {1, 0, 1, used}`;
