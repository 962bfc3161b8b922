import { createHash } from 'node:crypto';
import { container as rootContainer, type DependencyContainer, type InjectionToken } from 'tsyringe';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/types.js';
import { Tokens } from '../contracts/plugin.js';
import type { Clock } from '../util/clock.js';
import { StaticKeyStore } from '../keys/config-key-store.js';
import { hashSecretSync } from '../keys/secret-hash.js';
import { MemoryCreditLedger } from '../metering/memory-credit-ledger.js';
import { MemoryFilterStore } from '../network/memory-filter-store.js';
import { MemoryPinStore } from '../network/memory-pin-store.js';
import { MemoryRateLimiter } from '../metering/rate-limiter.js';
import { FailoverSelector } from '../upstream/failover-selector.js';
import { MemorySharedHeads } from '../upstream/memory-shared-heads.js';
import { MemoryUpstreamBudgets } from '../upstream/memory-upstream-budgets.js';
import { MemoryDedupMarks } from '../metering/memory-dedup-marks.js';
import { MemoryUsageRecorder } from '../usage/usage.js';

/** Every registration of `token` in `container`, or none (where `resolveAll` would throw). */
export function resolveAllOptional<T>(container: DependencyContainer, token: InjectionToken<T>): T[] {
  return container.isRegistered(token, true) ? container.resolveAll<T>(token) : [];
}

/** The loggable id of a configured key: its own id, or a hash prefix; never the key. */
export function keyIdOf(key: string, id?: string): string {
  return id ?? `key-${createHash('sha256').update(key).digest('hex').slice(0, 8)}`;
}

/**
 * A gateway's own container with the core's bindings, which plugins may replace: clock, logger, the
 * config's keys, and the in-memory ledger, rate limiter, shared heads, upstream selector, usage
 * recorder and filter store. Constructs them only; none starts anything.
 */
export function coreContainer(config: GatewayConfig, clock: Clock, logger: Logger): DependencyContainer {
  const container = rootContainer.createChildContainer();
  container.register(Tokens.Clock, { useValue: clock });
  container.register(Tokens.Logger, { useValue: logger });
  // Only the scrypt hash of a key's secret is kept, in the key store and in the (copied) resolved config alike.
  for (const k of config.keys) {
    if (k.secret === undefined) continue;
    k.secretHash ??= hashSecretSync(k.secret);
    delete k.secret;
  }
  container.register(Tokens.KeyStore, {
    useValue: new StaticKeyStore(config.keys.map((k) => [k.key, { id: keyIdOf(k.key, k.id), plan: k.plan, settings: k.settings, secretHash: k.secretHash }] as const)),
  });
  container.register(Tokens.CreditLedger, { useValue: new MemoryCreditLedger() });
  container.register(Tokens.RateLimiter, { useValue: new MemoryRateLimiter() });
  container.register(Tokens.SharedHeads, { useValue: new MemorySharedHeads() });
  container.register(Tokens.UpstreamBudgets, { useValue: new MemoryUpstreamBudgets() });
  container.register(Tokens.UpstreamSelector, { useValue: new FailoverSelector({ config, logger, sharedHeads: () => container.resolve(Tokens.SharedHeads) }) });
  container.register(Tokens.UsageRecorder, { useValue: new MemoryUsageRecorder() });
  container.register(Tokens.FilterStore, { useValue: new MemoryFilterStore() });
  container.register(Tokens.PinStore, { useValue: new MemoryPinStore() });
  container.register(Tokens.DedupMarks, { useValue: new MemoryDedupMarks() });
  return container;
}
