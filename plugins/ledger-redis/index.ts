/**
 * The Redis store plugin: API keys (hashed), daily credit balances, throughput buckets and usage shared
 * by several gateway instances through one Redis, with atomic Lua scripts, day keys that expire by
 * themselves, reconnection, and a configurable policy for when Redis is unreachable.
 *
 * @packageDocumentation
 */
export { ledgerRedis, RedisConnectionToken, type RedisLedgerPlugin } from './plugin.js';
export { createRedisStore, type RedisStore } from './redis-store.js';
export { RedisConnection, type StoreClient, type ScriptCommands, type ConnectionTransition } from './connection.js';
export { PendingWrites } from './pending-writes.js';
export { RedisKeyNames } from './key-names.js';
export { type AnyRedis, type RedisTopology } from './client.js';
export { RedisCreditLedger } from './redis-credit-ledger.js';
export { RedisRateLimiter } from './redis-rate-limiter.js';
export { RedisMetering } from './redis-metering.js';
export { RedisKeyRegistry, MAX_CACHED_KEYS } from './redis-key-registry.js';
export { RedisPlanRegistry } from './redis-plan-registry.js';
export { RedisUsageRecorder, MAX_PENDING_USAGE } from './redis-usage-recorder.js';
export { LEDGER_REDIS_PLUGIN, redisAddress, storeAddress, storeDescription, type RedisLedgerSettings, type RedisClusterSettings, type ResolvedRedisSettings, type UnavailablePolicy } from './settings.js';
export { RedisSharedHeads, RAISE_HEAD } from './shared-heads.js';
export { RedisFilterStore } from './redis-filter-store.js';
export { RedisPinStore } from './redis-pin-store.js';
export { RedisUpstreamBudgets, TAKE_UPSTREAM_BUDGET } from './upstream-budgets.js';
