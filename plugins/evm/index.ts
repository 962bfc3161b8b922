/**
 * The `evm` network family: the JSON-RPC methods of EVM chains (`eth_`, `net_`, `web3_`), their
 * parameter schemas, credit costs and limits.
 *
 * @packageDocumentation
 */
import { Tokens, systemClock, type Clock, type GatewayConfig, type TollgatePlugin } from '../../core/plugin-api.js';
import type { DedupMarks, FilterStore } from '../../core/store-api.js';
import { CachePoliciesToken, type NetworkFamily } from '../../core/family-api.js';
import { createEvmFamily, EVM_FAMILY_NAME } from './family.js';
import { resolveEvmSettings, type EvmFamilyOptions } from './options.js';
import { EVM_CACHE_POLICIES } from './cache-policies.js';
import { getLogsSplitSettings } from './get-logs-split/settings.js';
import { resendChargeStage } from './resend-charge.js';

export { EVM_FAMILY_NAME } from './family.js';
export { type GetLogsSplitSettings } from './get-logs-split/settings.js';
export { type EvmDebugOptions, type EvmFamilyOptions, type EvmSettings } from './options.js';
export { type GasCapSettings } from './gas-cap.js';
export { EVM_CACHE_POLICIES } from './cache-policies.js';
export { type CallObjectOptions } from './call-object.js';

/**
 * The evm family as a plugin: registers the `evm` `NetworkFamily` (probe `eth_blockNumber`), its
 * response-cache policies ({@link EVM_CACHE_POLICIES}) and the stage that charges a resent signed
 * transaction once (`evm.resendCharge`, before `meter`).
 * Thresholds default to the spec's; `options` change them, and the config's `plugins.evm` section
 * overrides both. The gas-limit cache uses the gateway's clock unless `options.clock` is given.
 *
 * @example
 * ```ts
 * const gateway = await createGateway({
 *   config: { networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: 'http://127.0.0.1:8545' }] }] },
 *   plugins: [httpTransport(), evmFamily({ getLogsMaxResults: 20_000 })],
 * });
 * ```
 */
export function evmFamily(options: EvmFamilyOptions = {}): TollgatePlugin {
  return {
    name: EVM_FAMILY_NAME,
    register(container, config) {
      const clock: Clock = container.isRegistered(Tokens.Clock, true) ? container.resolve(Tokens.Clock) : systemClock;
      let filters: FilterStore | undefined;
      // The filter store is resolved on first use: a store plugin registered after this one may provide it.
      const filterStore = (): FilterStore => (filters ??= container.resolve(Tokens.FilterStore));
      let resendWindowMs = 0;
      // Built again on a reload, from the reloaded config's `plugins.evm` (prices, limits, debug) and networks.
      const familyFor = (current: GatewayConfig): NetworkFamily => {
        const settings = resolveEvmSettings(options, current.plugins[EVM_FAMILY_NAME] ?? {}, clock);
        resendWindowMs = settings.resendWindowMs;
        // Each network's splitting settings are checked here, so a bad one stops the start (or the reload).
        current.networks.forEach((network, i) => {
          if (network.families.includes(EVM_FAMILY_NAME)) getLogsSplitSettings(network.options ?? {}, `networks[${i}].options.getLogs`);
        });
        return { ...createEvmFamily(settings, filterStore), reconfigure: familyFor };
      };
      container.register(Tokens.Family, { useValue: familyFor(config) });
      let marks: DedupMarks | undefined;
      // Resolved on first use, as the filter store: a store plugin registered after this one shares the marks.
      container.register(Tokens.Stage, { useValue: resendChargeStage({ marks: () => (marks ??= container.resolve(Tokens.DedupMarks)), windowMs: () => resendWindowMs }) });
      // Read by the cache plugin when it is used; nothing else resolves it.
      container.register(CachePoliciesToken, { useValue: EVM_CACHE_POLICIES });
    },
  };
}
