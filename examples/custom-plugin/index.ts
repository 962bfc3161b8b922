/**
 * `tollgate-plugin-allowlist`: two Tollgate plugins written against the public API only.
 *
 * - {@link allowlist}: per-key allowlists of methods, Origins, User-Agent substrings and contract
 *   addresses, refusing with `FORBIDDEN` (-33100, HTTP 403) before anything is charged;
 * - {@link gethExtrasFamily}: a network family for Geth's `txpool_*` methods and `web3_sha3`.
 *
 * @packageDocumentation
 */
export { allowlist, allowlistStage, ALLOWLIST_STAGE } from './allowlist.js';
export { ALLOWLIST_PLUGIN, readAllowlistSettings, resolveAllowlists, type AllowlistSettings, type KeyAllowlist, type CompiledAllowlist } from './allowlist-settings.js';
export { refusalOf, ADDRESS_METHODS, type AllowlistInput } from './allowlist-rules.js';
export { parseOriginPattern, originMatches, type OriginPattern } from './origin-pattern.js';
export { gethExtrasFamily, createGethExtrasFamily, GETH_EXTRAS_FAMILY, GETH_EXTRAS_METHODS } from './geth-extras.js';
