import { KeyRegistryToken, LayeredKeyStore, MeteringToken, PlanRegistryToken } from '../../core/store-api.js';
import { PluginError, Tokens, type InjectionToken, type TollgatePlugin } from '../../core/plugin-api.js';
import type { RedisConnection } from './connection.js';
import { LEDGER_REDIS_PLUGIN, resolveRedisSettings, type RedisLedgerSettings } from './settings.js';
import { createRedisStore, type RedisStore } from './redis-store.js';
import { exportConnectionMetrics } from './connection-metrics.js';
import { RedisSharedHeads } from './shared-heads.js';
import { RedisFilterStore } from './redis-filter-store.js';
import { RedisPinStore } from './redis-pin-store.js';
import { RedisDedupMarks } from './redis-dedup-marks.js';
import { RedisUpstreamBudgets } from './upstream-budgets.js';

/**
 * The container token of the store's connection, for plugins that keep keys of their own in the store's
 * Redis (the payments plugin's journal). `Symbol.for`, so they find it without importing this plugin.
 */
export const RedisConnectionToken = Symbol.for('tollgate.ledger-redis.Connection') as InjectionToken<RedisConnection>;

/** The Redis store plugin, with access to its store once registered. */
export interface RedisLedgerPlugin extends TollgatePlugin {
  /**
   * The store.
   *
   * @throws Error before the plugin was registered in a gateway.
   */
  readonly store: RedisStore;
}

/**
 * The Redis store, for several gateway instances behind a load balancer: keys, daily balances,
 * throughput buckets and usage shared through one Redis with atomic Lua scripts. It registers the
 * `Tokens.CreditLedger`, `Tokens.RateLimiter`, `Tokens.UsageRecorder`, `Tokens.FilterStore`, `Tokens.PinStore`, `Tokens.DedupMarks`,
 * {@link MeteringToken} (a call's bucket and debit in one script), {@link KeyRegistryToken}, {@link PlanRegistryToken} and a `Tokens.KeyStore` that looks a key up in the config's keys first,
 * then in Redis. The gateway does not start until Redis answers (`connectTimeoutMs`); afterwards the
 * connection comes back by itself, and `whenUnavailable` decides what happens meanwhile.
 *
 * @example
 * ```ts
 * const gateway = await createGateway({
 *   config: { ...config, plugins: { 'ledger-redis': { url: 'redis://10.0.0.7:6379', whenUnavailable: 'refuse' } } },
 *   plugins: [ledgerRedis(), httpTransport(), evmFamily()],
 * });
 * ```
 */
export function ledgerRedis(options: RedisLedgerSettings = {}): RedisLedgerPlugin {
  let store: RedisStore | undefined;
  return {
    name: LEDGER_REDIS_PLUGIN,
    get store(): RedisStore {
      if (store === undefined) throw new Error('the ledger-redis plugin is not registered in a gateway yet');
      return store;
    },
    register(container, config) {
      const settings = resolveRedisSettings([options, config.plugins[LEDGER_REDIS_PLUGIN]]);
      store = createRedisStore(settings, container.resolve(Tokens.Logger));
      exportConnectionMetrics(store.connection);
      const configKeys = container.resolve(Tokens.KeyStore);
      container.register(Tokens.KeyStore, { useValue: new LayeredKeyStore(configKeys, store.keys) });
      container.register(KeyRegistryToken, { useValue: store.keys });
      container.register(PlanRegistryToken, { useValue: store.plans });
      container.register(Tokens.CreditLedger, { useValue: store.ledger });
      container.register(Tokens.RateLimiter, { useValue: store.limiter });
      container.register(MeteringToken, { useValue: store.metering });
      container.register(Tokens.UsageRecorder, { useValue: store.usage });
      // The gateway starts and stops it: it needs the networks, which exist after the plugins started.
      container.register(Tokens.SharedHeads, { useValue: new RedisSharedHeads(settings, container.resolve(Tokens.Logger)) });
      container.register(Tokens.FilterStore, { useValue: new RedisFilterStore(store.connection) });
      container.register(Tokens.PinStore, { useValue: new RedisPinStore(store.connection) });
      container.register(Tokens.UpstreamBudgets, { useValue: new RedisUpstreamBudgets(store.connection, container.resolve(Tokens.Logger)) });
      container.register(Tokens.DedupMarks, { useValue: new RedisDedupMarks(store.connection, container.resolve(Tokens.Logger)) });
      container.register(RedisConnectionToken, { useValue: store.connection });
    },
    async start() {
      try {
        await store!.open();
      } catch (error) {
        throw new PluginError(`${LEDGER_REDIS_PLUGIN}: ${(error as Error).message}`);
      }
    },
    async stop() {
      await store?.close();
    },
  };
}
