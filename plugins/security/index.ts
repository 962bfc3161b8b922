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
export { securityStage, SECURITY_STAGE, SECRET_CACHE_MS, SECRET_FAILURES_PER_SECOND, type SecurityLookup } from './security-stage.js';
export {
  SECURITY_PLUGIN,
  JWT_ALGORITHMS,
  MAX_JWT_KEYS,
  compileSecurity,
  keySecurityProblems,
  KEY_SECURITY_SCHEMA,
  SECURITY_SETTINGS_SCHEMA,
  securitySettingsProblems,
  type KeySecurity,
  type SecuritySettings,
  type JwtSettings,
  type JwtPublicKey,
  type JwtAlgorithm,
  type CompiledSecurity,
  type CompiledAllowlist,
} from './settings.js';
export { refusalOf, ADDRESS_METHODS, type AllowlistInput, type ListSource } from './allowlist-rules.js';
export { refusalError, type Refusal } from './refusal.js';
export { JwtVerifier, NARROWING_CLAIMS, type VerifiedJwt } from './jwt.js';
export { keySecretOf, bearerTokenOf, authorizationOf } from './key-secret.js';
export { parseOriginPattern, originMatches, type OriginPattern } from './origin-pattern.js';
