/**
 * The response cache: answers repeated reads without asking a node, by the finality rules each network
 * family declares, shares identical calls in flight, and drops unfinalized answers on a reorg. The
 * memory store is the default; `cache-redis` shares one store between instances.
 *
 * @packageDocumentation
 */
export { responseCache, type CachePlugin } from './plugin.js';
export { ResponseCache, type CacheCounters } from './response-cache.js';
export { CACHE_PLUGIN, type CacheSettings, type ResolvedCacheSettings } from './settings.js';
export { CacheStoreToken, type CacheStore } from './store.js';
export { MemoryCacheStore } from './memory-store.js';
export { HeadTracker, type HeadEvents } from './head-tracker.js';
export { InFlightCalls } from './in-flight-calls.js';
export { type AnswerMember } from './envelope.js';
