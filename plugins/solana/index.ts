/**
 * The `solana` network family: the 52 HTTP JSON-RPC methods of a Solana node, with their parameter
 * schemas, credit costs, limits, cache and failover classes, commitment-aware routing and safe sends.
 *
 * @packageDocumentation
 */
import { Tokens, validateSettings, type GatewayConfig, type TollgatePlugin } from '../../core/plugin-api.js';
import { chargeOnceStage, CachePoliciesToken, type NetworkFamily } from '../../core/family-api.js';
import type { DedupMarks } from '../../core/store-api.js';
import { createSolanaFamily, SOLANA_FAMILY_NAME, type SolanaFamilyOptions } from './family.js';
import { SOLANA_CACHE_POLICIES } from './cache-policies.js';
import { solanaNetworkSettings } from './network-settings.js';
import { firstSignature } from './transaction-signature.js';

export { SOLANA_FAMILY_NAME, type SolanaFamilyOptions } from './family.js';
export { SOLANA_CACHE_POLICIES } from './cache-policies.js';
export { SOLANA_CREDITS } from './credits.js';
export { type SolanaNetworkSettings, type Commitment } from './network-settings.js';

/** The default resend window: the same transaction sent again within 60 s is charged once. */
const DEFAULT_RESEND_WINDOW_MS = 60_000;

/** The config's `plugins.solana` section. */
const SETTINGS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    transports: { anyOf: [{ const: 'all' }, { type: 'array', items: { type: 'string', minLength: 1 } }] },
    programAccountsMaxResults: { type: 'integer', minimum: 1 },
    resendWindowMs: { type: 'integer', minimum: 0 },
  },
} as const;

/** Reads the config's `plugins.solana` section through core's validator. */
function readSolanaSettings(section: Readonly<Record<string, unknown>>): SolanaFamilyOptions {
  return validateSettings<SolanaFamilyOptions>(SETTINGS_SCHEMA, [section], `plugins.${SOLANA_FAMILY_NAME}`);
}

/**
 * The solana family as a plugin: registers the `solana` `NetworkFamily` (probe `getSlot` at
 * `processed`), its response-cache policies ({@link SOLANA_CACHE_POLICIES}) and the stage that charges
 * a resent transaction once (`solana.resendCharge`, before `meter`). Its methods are offered over HTTP
 * only unless `options.transports` (or the config's `plugins.solana.transports`, which wins) says
 * otherwise. Each network's `options.solana` (default commitment, airdrops) is checked at start.
 *
 * @example
 * ```ts
 * const gateway = await createGateway({
 *   config: { networks: [{ name: 'solana', families: ['solana'], upstreams: [{ url: 'http://127.0.0.1:8899' }] }] },
 *   plugins: [httpTransport(), solanaFamily()],
 * });
 * ```
 */
export function solanaFamily(options: SolanaFamilyOptions = {}): TollgatePlugin {
  return {
    name: SOLANA_FAMILY_NAME,
    register(container, config) {
      let resendWindowMs = DEFAULT_RESEND_WINDOW_MS;
      // Built again on a reload, from the reloaded config's `plugins.solana` and networks.
      const familyFor = (current: GatewayConfig): NetworkFamily => {
        const settings = { ...options, ...readSolanaSettings(current.plugins[SOLANA_FAMILY_NAME] ?? {}) };
        resendWindowMs = settings.resendWindowMs ?? DEFAULT_RESEND_WINDOW_MS;
        // Each network's Solana settings are checked here, so a bad one stops the start (or the reload).
        current.networks.forEach((network, i) => {
          if (network.families.includes(SOLANA_FAMILY_NAME)) solanaNetworkSettings(network.options ?? {}, `networks[${i}].options.solana`);
        });
        return { ...createSolanaFamily(settings), reconfigure: familyFor };
      };
      container.register(Tokens.Family, { useValue: familyFor(config) });
      let marks: DedupMarks | undefined;
      // Resolved on first use: a store plugin registered after this one shares the marks across instances.
      container.register(Tokens.Stage, {
        useValue: chargeOnceStage({
          name: 'solana.resendCharge',
          family: SOLANA_FAMILY_NAME,
          method: 'sendTransaction',
          identity: firstSignature,
          marks: () => (marks ??= container.resolve(Tokens.DedupMarks)),
          windowMs: () => resendWindowMs,
        }),
      });
      container.register(CachePoliciesToken, { useValue: SOLANA_CACHE_POLICIES });
    },
  };
}
