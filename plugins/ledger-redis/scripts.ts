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
 * The debit of `credits` against a day's balance (`used`, read by the including script) under `limit`,
 * then the key's paid balance (`paid`, read likewise): the day first, the rest from the paid balance,
 * all or nothing. Leaves `fromDay`, `fromPaid` and whether the debit `fits`; changes nothing.
 */
const SPLIT = `
local fromDay = math.min(credits, math.max(0, limit - used))
local fromPaid = credits - fromDay
local fits = fromPaid <= paid`;

/**
 * A single debit's marker value: `<day part>:<paid part>` (what a cancellation gives back); earlier
 * versions wrote the credits alone, which a refund still reads as all from the day. `paidTakenOf(mark)`
 * is the paid part a marker records.
 */
const PAID_TAKEN_OF = `
local function paidTakenOf(mark)
  local sep = string.find(mark, ':', 1, true)
  if sep then return tonumber(string.sub(mark, sep + 1)) end
  return 0
end`;

/**
 * A debit's writes once its outcome is known (`used`, `paid`, `fromDay`, `fromPaid` set): the day's new
 * use with its time to live (`SET … PX`, one command where `INCRBY` and `PEXPIRE` were two: the script
 * read the use, so it knows the sum), the paid balance likewise (it never expires: `KEEPTTL`).
 * `BALANCE` and `PAID` are the KEYS indexes, `TTL` the ARGV index of the balance's time to live.
 */
function writeDebit(balance: number, paidKey: number, ttl: number): string {
  return `
if fromDay > 0 then redis.call('SET', KEYS[${balance}], string.format('%d', used), 'PX', ARGV[${ttl}]) end
if fromPaid > 0 then redis.call('SET', KEYS[${paidKey}], string.format('%d', paid), 'KEEPTTL') end`;
}

/**
 * KEYS: balance, debit marker, paid balance. ARGV: credits, daily limit, time to live (ms),
 * idempotency window (ms). Takes the credits if the day and the paid balance together cover them (the
 * day first): `{1, used, paid left, paid taken}` or `{0, used, paid left, 0}`. A debit whose id is
 * already marked changes nothing: `{1, …}` when it was taken (this is the same command sent again, after
 * a lost answer or a redirection), `{2, …}` when it was cancelled. The marker, the day and the paid
 * balance are read with one `MGET`.
 */
export const DEBIT = `${PAID_TAKEN_OF}
local got = redis.call('MGET', KEYS[2], KEYS[1], KEYS[3])
local mark = got[1]
local used = tonumber(got[2] or '0')
local paid = tonumber(got[3] or '0')
if mark then
  if mark == 'r' then return {2, used, paid, 0} end
  return {1, used, paid, paidTakenOf(mark)}
end
local credits = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
${SPLIT}
if not fits then return {0, used, paid, 0} end
used = used + fromDay
paid = paid - fromPaid
${writeDebit(1, 3, 3)}
redis.call('SET', KEYS[2], string.format('%d:%d', fromDay, fromPaid), 'PX', ARGV[4])
return {1, used, paid, fromPaid}`;

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
 * KEYS: balance, debit marker, paid balance. ARGV: credits from the day, whether the debit is known to
 * have been taken (1|0), idempotency window (ms), credits from the paid balance. Gives a debit back
 * once, each part where it was taken from: the day part never below zero and never re-creating an
 * expired day, the paid part into the paid balance. A debit whose outcome is unknown (its command timed
 * out) and that Redis has not seen is cancelled instead: its marker makes it a no-op should it still
 * arrive. When the debit's own marker is there (a single debit's `<day>:<paid>`, or a batch's, from
 * `TAKE_DEBIT_BATCH`), the parts it records are given back, whatever the arguments say.
 */
export const REFUND = `
local mark = redis.call('GET', KEYS[2])
if mark == 'r' then return 0 end
redis.call('SET', KEYS[2], 'r', 'PX', ARGV[3])
if not mark and ARGV[2] ~= '1' then return 0 end
local credits = tonumber(ARGV[1])
local paid = tonumber(ARGV[4])
if mark then
  if string.sub(mark, 1, 1) == '{' then
    -- A batch's marker holds what the batch took: cancelling the batch gives back exactly that.
    local batch = cjson.decode(mark)
    credits = batch.t
    paid = batch.p or 0
  else
    local sep = string.find(mark, ':', 1, true)
    if sep then
      credits = tonumber(string.sub(mark, 1, sep - 1))
      paid = tonumber(string.sub(mark, sep + 1))
    else
      credits = tonumber(mark)
      paid = 0
    end
  end
end
if paid > 0 then redis.call('INCRBY', KEYS[3], paid) end
if credits == 0 or redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local used = redis.call('DECRBY', KEYS[1], credits)
if used < 0 then
  redis.call('SET', KEYS[1], '0', 'KEEPTTL')
  return 0
end
return used`;

/**
 * KEYS: paid balance, set of the top-up ids applied. ARGV: credits, top-up id. Adds the credits to the
 * paid balance once per id, remembering the id in the same step (neither expires): the new paid
 * balance, or -1 when that id was applied before (nothing changed).
 */
export const TOP_UP = `
if redis.call('SADD', KEYS[2], ARGV[2]) == 0 then return -1 end
return redis.call('INCRBY', KEYS[1], ARGV[1])`;

/**
 * A bucket's tokens now, refilled for the time passed since its last use: reads `bucketValue` (the
 * bucket's string `<tokens>|<at>`, or false when there is none, read by the including script: `TAKE`
 * with a `GET`, the debit scripts in the `MGET` of their balances), and `rate`, `burst` and `now`, which
 * the including script has set; leaves `tokens` and `at`. A bucket that is not there is full.
 */
const REFILL = `local tokens = nil
local at = nil
if bucketValue then
  local bar = string.find(bucketValue, '|', 1, true)
  if bar then
    tokens = tonumber(string.sub(bucketValue, 1, bar - 1))
    at = tonumber(string.sub(bucketValue, bar + 1))
  end
end
if tokens == nil or at == nil then
  tokens = burst
  at = now
elseif now > at then
  tokens = math.min(burst, tokens + (now - at) / 1000 * rate)
  at = now
end`;

/**
 * Writes the bucket (KEYS[1]) after `REFILL`: `<tokens>|<at>` in one `SET … PX`, so every write renews
 * its time to live: `burst / rate` s (when an idle bucket would be full again, which is what a bucket
 * that is not there reads as) plus 1 s, a margin for instances' clocks that differ.
 */
const WRITE_BUCKET = `redis.call('SET', KEYS[1], string.format('%.17g|%d', tokens, at), 'PX', math.ceil(burst / rate * 1000) + 1000)`;

/**
 * The token bucket shared by `TAKE` and `TAKE_DEBIT`. KEYS[1]: bucket, its value read by the including
 * script into `bucketValue`. ARGV[1..4]: cost, tokens per second, burst, now (ms). Refills for the time
 * passed since the bucket's last use, then takes `min(cost, burst)` tokens if it holds them (`allowed`);
 * idle buckets expire once they would be full again. Leaves `tokens`, `need` and `rate` for the
 * caller's answer.
 */
const BUCKET = `
local cost = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local now = tonumber(ARGV[4])
${REFILL}
local need = math.min(cost, burst)
local allowed = tokens >= need
if allowed then
  tokens = tokens - need
  ${WRITE_BUCKET}
end`;

/**
 * KEYS: bucket. ARGV: cost, tokens per second, burst, now (ms). Takes from the token bucket
 * (the shared bucket fragment): `{1, 0}` or `{0, retry after ms}`.
 */
export const TAKE = `
local bucketValue = redis.call('GET', KEYS[1])
${BUCKET}
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

/**
 * KEYS: a key's record. ARGV: the key's hash, then field/value pairs. Writes the record unless one with
 * that id exists: 1, or 0 when another key has the id. A record that exists with the same hash is this
 * very insert sent again (its answer was lost): 1, changing nothing.
 */
export const INSERT = `
if redis.call('EXISTS', KEYS[1]) == 1 then
  if redis.call('HGET', KEYS[1], 'keyHash') == ARGV[1] then return 1 end
  return 0
end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
return 1`;

/**
 * KEYS: a key's record. ARGV: field/value pairs. Changes the key: `{1, hash before the change}` or
 * `{0, ''}` when there is no such key.
 */
export const UPDATE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return {0, ''} end
local old = redis.call('HGET', KEYS[1], 'keyHash') or ''
if #ARGV > 0 then redis.call('HSET', KEYS[1], unpack(ARGV)) end
return {1, old}`;

/**
 * KEYS: a key-hash entry. ARGV: key id, id found stale (or ''). Points the entry at the id if it is free,
 * already points there, or still points at the stale id the caller checked: 1, else 0.
 */
export const CLAIM_HASH = `
local current = redis.call('GET', KEYS[1])
if current and current ~= ARGV[1] and current ~= ARGV[2] then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
return 1`;

/** KEYS: a key-hash entry. ARGV: key id. Deletes the entry if it points at that id: 1, else 0. */
export const RELEASE_HASH = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1`;

/**
 * Replaces a managed plan's value if it is still the one read (compare and set). KEYS: the plans hash.
 * ARGV: plan name, value read, new value. Returns 1 when replaced, 0 when the plan is gone or changed.
 */
export const REPLACE_PLAN = `
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
`;

/**
 * KEYS: bucket, balance, debit marker, paid balance. ARGV: cost, tokens per second, burst, now (ms),
 * credits, daily limit, time to live of the balance (ms), idempotency window (ms). `TAKE` and then, if
 * the bucket let the call through, `DEBIT` (the day first, then the paid balance), in one atomic step:
 * `{1, 0, 1|0|2, used, paid left, paid taken}` or `{0, retry after ms, 0, 0, 0, 0}`. A debit id already
 * marked is this command sent again: its outcome, without taking from the bucket again.
 */
export const TAKE_DEBIT = `${PAID_TAKEN_OF}
local got = redis.call('MGET', KEYS[3], KEYS[2], KEYS[4], KEYS[1])
local mark = got[1]
local used = tonumber(got[2] or '0')
local paid = tonumber(got[3] or '0')
if mark then
  if mark == 'r' then return {1, 0, 2, used, paid, 0} end
  return {1, 0, 1, used, paid, paidTakenOf(mark)}
end
local bucketValue = got[4]
${BUCKET}
if not allowed then return {0, math.ceil((need - tokens) / rate * 1000), 0, 0, 0, 0} end
local credits = tonumber(ARGV[5])
local limit = tonumber(ARGV[6])
${SPLIT}
if not fits then return {1, 0, 0, used, paid, 0} end
used = used + fromDay
paid = paid - fromPaid
${writeDebit(2, 4, 7)}
redis.call('SET', KEYS[3], string.format('%d:%d', fromDay, fromPaid), 'PX', ARGV[8])
return {1, 0, 1, used, paid, fromPaid}`;

/**
 * KEYS: bucket, balance, batch marker, paid balance. ARGV: tokens per second, burst, now (ms), daily
 * limit, time to live of the balance (ms), idempotency window (ms), then the cost of each call of the
 * batch. The calls of one key that arrived in two turns of the gateway's event loop (or while the key's
 * previous script was in Redis), each taken as
 * `TAKE_DEBIT` would take it (the day first, then the paid balance), in order, in one atomic step: for
 * each call `passed (1|0), retry after ms, taken (1|0), used, paid left, paid taken`. The marker keeps
 * the answer (and the credits taken from the day and from the paid balance, for a cancellation), so the
 * same batch sent again gets the same answer and changes nothing; `{-1}` when the batch was cancelled
 * before it arrived. Reads every key in one `MGET` (marker, day, paid balance, bucket) and writes each
 * key it changed once, whatever the number of calls.
 */
export const TAKE_DEBIT_BATCH = `
local got = redis.call('MGET', KEYS[3], KEYS[2], KEYS[4], KEYS[1])
local mark = got[1]
if mark == 'r' then return {-1} end
if mark then return cjson.decode(mark).o end
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local limit = tonumber(ARGV[4])
local bucketValue = got[4]
${REFILL}
local used = tonumber(got[2] or '0')
local paid = tonumber(got[3] or '0')
local out = {}
local taken = 0
local takenPaid = 0
local tookTokens = false
for i = 7, #ARGV do
  local credits = tonumber(ARGV[i])
  local need = math.min(credits, burst)
  if tokens >= need then
    tokens = tokens - need
    tookTokens = true
    ${SPLIT}
    if fits then
      used = used + fromDay
      paid = paid - fromPaid
      taken = taken + fromDay
      takenPaid = takenPaid + fromPaid
      out[#out + 1] = 1; out[#out + 1] = 0; out[#out + 1] = 1
    else
      fromPaid = 0
      out[#out + 1] = 1; out[#out + 1] = 0; out[#out + 1] = 0
    end
    out[#out + 1] = used; out[#out + 1] = paid; out[#out + 1] = fromPaid
  else
    out[#out + 1] = 0; out[#out + 1] = math.ceil((need - tokens) / rate * 1000); out[#out + 1] = 0
    out[#out + 1] = used; out[#out + 1] = paid; out[#out + 1] = 0
  end
end
if tookTokens then
  ${WRITE_BUCKET}
end
local fromDay = taken
local fromPaid = takenPaid
${writeDebit(2, 4, 5)}
redis.call('SET', KEYS[3], cjson.encode({t = taken, p = takenPaid, o = out}), 'PX', ARGV[6])
return out`;
