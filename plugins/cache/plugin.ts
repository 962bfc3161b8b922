import { PluginError, Tokens, type TollgatePlugin } from '../../core/plugin-api.js';
import { MemoryCacheStore } from './memory-store.js';
import { CachePoliciesToken, type FamilyCachePolicies } from '../../core/family-api.js';
import { ResponseCache } from './response-cache.js';
import { CACHE_PLUGIN, resolveCacheSettings, type CacheSettings } from './settings.js';
import { CacheStoreToken } from './store.js';

/** The cache plugin, with access to its cache once registered. */
export interface CachePlugin extends TollgatePlugin {
  /**
   * The cache: counters, heads, and {@link ResponseCache.refreshHead}.
   *
   * @throws Error before the plugin was registered in a gateway.
   */
  readonly cache: ResponseCache;
}

/**
 * The response cache as a plugin. It registers the `cache` and `cacheStore` pipeline stages; the
 * store is the one registered under {@link CacheStoreToken} (the `cache-redis` plugin's, for instance),
 * else a memory store bounded by `maxBytes`. Methods are cached only where their family declared a
 * policy ({@link CachePoliciesToken}): the bundled evm, polygon and solana families do.
 *
 * @example
 * ```ts
 * const cache = responseCache({ maxBytes: 256 * 1024 * 1024 });
 * const gateway = await createGateway({ config, plugins: [httpTransport(), evmFamily(), cache] });
 * console.log(cache.cache.counters); // { hits, misses, shared, storeFailures, reorgs }
 * ```
 */
export function responseCache(options: CacheSettings = {}): CachePlugin {
  let cache: ResponseCache | undefined;
  let created: (() => ResponseCache) | undefined;
  return {
    name: CACHE_PLUGIN,
    get cache(): ResponseCache {
      if (cache === undefined) throw new Error('the cache plugin is not registered in a gateway yet');
      return cache;
    },
    register(container, config) {
      let settings;
      try {
        settings = resolveCacheSettings([options as Record<string, unknown>, config.plugins[CACHE_PLUGIN]]);
      } catch (error) {
        throw new PluginError((error as Error).message);
      }
      const resolved = settings;
      // Families and stores may register after this plugin: both are looked up once every plugin has registered.
      created = (): ResponseCache =>
        (cache ??= new ResponseCache(
          resolved,
          container.isRegistered(CacheStoreToken, true) ? container.resolve(CacheStoreToken) : new MemoryCacheStore(resolved.maxBytes),
          container.isRegistered(CachePoliciesToken, true) ? container.resolveAll<FamilyCachePolicies>(CachePoliciesToken) : [],
          container.resolve(Tokens.Logger),
        ));
      // Before `meter`, so a hit is priced per plan; after `checkResult`, so only checked answers are kept.
      // Both concern only the families that declared cache policies, known once every plugin registered.
      container.register(Tokens.Stage, { useValue: { name: 'cache', after: 'validate', get families() { return created!().families; }, create: () => created!().lookupStage() } });
      container.register(Tokens.Stage, { useValue: { name: 'cacheStore', after: 'checkResult', get families() { return created!().families; }, create: () => created!().keepStage() } });
    },
    async start(gateway) {
      await created!().start(() => gateway.networks);
    },
    async stop() {
      await cache?.stop();
    },
  };
}
