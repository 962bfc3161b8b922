/**
 * A Redis store for the response cache, shared by every gateway instance that uses it, with large
 * values compressed.
 *
 * @packageDocumentation
 */
import { PluginError, Tokens, type TollgatePlugin } from '../../core/plugin-api.js';
import { CacheStoreToken } from '../cache/index.js';
import { RedisCacheStore } from './redis-cache-store.js';
import { CACHE_REDIS_PLUGIN, resolveRedisCacheSettings, type RedisCacheSettings } from './settings.js';

export { RedisCacheStore } from './redis-cache-store.js';
export { CACHE_REDIS_PLUGIN, type RedisCacheSettings, type RedisCacheClusterSettings, type ResolvedRedisCacheSettings } from './settings.js';

/**
 * The Redis cache store as a plugin: registers a {@link RedisCacheStore} as the cache's store. The
 * `cache` plugin opens it at start and closes it on stop; the same policies apply as with the memory store.
 *
 * @example
 * ```ts
 * const gateway = await createGateway({
 *   config: { ...config, plugins: { 'cache-redis': { url: 'redis://10.0.0.7:6379' } } },
 *   plugins: [httpTransport(), evmFamily(), cacheRedis(), responseCache()],
 * });
 * ```
 */
export function cacheRedis(options: RedisCacheSettings = {}): TollgatePlugin {
  return {
    name: CACHE_REDIS_PLUGIN,
    register(container, config) {
      let settings;
      try {
        settings = resolveRedisCacheSettings([options as Record<string, unknown>, config.plugins[CACHE_REDIS_PLUGIN]]);
      } catch (error) {
        throw new PluginError((error as Error).message);
      }
      container.register(CacheStoreToken, { useValue: new RedisCacheStore(settings, container.resolve(Tokens.Logger)) });
    },
  };
}
