/**
 * The security plugin: per-key security settings, as hosted node services offer them. Allowlists of
 * methods, origins (with `*.` subdomain wildcards), user agents and contract addresses (types ANDed,
 * entries ORed); an optional key secret on JSON-RPC (HTTP basic with an empty user), which may skip the
 * allowlists; per-key network toggles; and JWT (RS256/ES256, up to three public keys per key, `kid`,
 * `aud`, `exp`/`nbf`, claims that narrow methods, addresses and origins). Refusals are HTTP 403 with a
 * JSON-RPC error naming the setting and the fix.
 *
 * @packageDocumentation
 */
export { security, SECURITY_SECTION } from './plugin.js';
export { SECURITY_PLUGIN, JWT_ALGORITHMS, type KeySecurity, type SecuritySettings, type JwtSettings, type JwtPublicKey, type JwtAlgorithm } from './settings.js';
