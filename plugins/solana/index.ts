/**
 * The `solana` network family: `getAccountInfo` and `getClusterNodes` (the spec's methods) plus the
 * health calls `getHealth`, `getSlot` and `getVersion`, with their parameter schemas and credit costs.
 *
 * @packageDocumentation
 */
import { Tokens, validateSettings, type TollgatePlugin } from '../../core/plugin-api.js';
import { createSolanaFamily, SOLANA_FAMILY_NAME, type SolanaFamilyOptions } from './family.js';
import { CachePoliciesToken } from '../../core/plugin-api.js';
import { SOLANA_CACHE_POLICIES } from './cache-policies.js';

export { SOLANA_FAMILY_NAME, type SolanaFamilyOptions } from './family.js';
export { SOLANA_CACHE_POLICIES } from './cache-policies.js';

/** The config's `plugins.solana` section: only `transports` (an array of transport names, or `"all"`). */
const SETTINGS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    transports: { anyOf: [{ const: 'all' }, { type: 'array', items: { type: 'string', minLength: 1 } }] },
  },
} as const;

/** Reads the config's `plugins.solana` section through core's validator. */
function readSolanaSettings(section: Readonly<Record<string, unknown>>): SolanaFamilyOptions {
  return validateSettings<SolanaFamilyOptions>(SETTINGS_SCHEMA, [section], `plugins.${SOLANA_FAMILY_NAME}`);
}

/**
 * The solana family as a plugin: registers the `solana` `NetworkFamily` (probe `getHealth`) and its
 * response-cache policies ({@link SOLANA_CACHE_POLICIES}). Its
 * methods are offered over HTTP only unless `options.transports` (or the config's
 * `plugins.solana.transports`, which wins) says otherwise.
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
      const fromConfig = readSolanaSettings(config.plugins[SOLANA_FAMILY_NAME] ?? {});
      container.register(Tokens.Family, { useValue: createSolanaFamily({ ...options, ...fromConfig }) });
      container.register(CachePoliciesToken, { useValue: SOLANA_CACHE_POLICIES });
    },
  };
}
