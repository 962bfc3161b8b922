/**
 * The `solana` network family: `getAccountInfo` and `getClusterNodes` (the spec's methods) plus the
 * health calls `getHealth`, `getSlot` and `getVersion`, with their parameter schemas and credit costs.
 *
 * @packageDocumentation
 */
import { ConfigError, Tokens, type TollgatePlugin } from '../../core/index.js';
import { createSolanaFamily, SOLANA_FAMILY_NAME, type SolanaFamilyOptions } from './family.js';

export { createSolanaFamily, SOLANA_FAMILY_NAME, SOLANA_DEFAULT_TRANSPORTS, type SolanaFamilyOptions } from './family.js';
export { SOLANA_METHODS } from './methods.js';
export { decodePubkey, pubkeyError, pubkeyParamCheck, PUBKEY_BYTES, MAX_PUBKEY_BASE58_LENGTH } from './pubkey.js';
/** The value schemas (public key, commitment, encodings, data slice, config objects) and the helpers that build method schemas. */
export * as solanaSchemas from './schemas.js';

/** Reads the config's `plugins.solana` section: only `transports` (an array of transport names, or `"all"`). */
function readSolanaSettings(section: Readonly<Record<string, unknown>>): SolanaFamilyOptions {
  const problems: string[] = [];
  for (const name of Object.keys(section)) {
    if (name !== 'transports') problems.push(`plugins.${SOLANA_FAMILY_NAME}.${name}: unknown setting`);
  }
  const transports = section.transports;
  const valid = transports === undefined || transports === 'all' || (Array.isArray(transports) && transports.every((t) => typeof t === 'string' && t !== ''));
  if (!valid) problems.push(`plugins.${SOLANA_FAMILY_NAME}.transports: must be an array of transport names or "all"`);
  if (problems.length > 0) throw new ConfigError(problems);
  return transports === undefined ? {} : { transports: transports as SolanaFamilyOptions['transports'] };
}

/**
 * The solana family as a plugin: registers the `solana` `NetworkFamily` (probe `getHealth`). Its
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
    },
  };
}
