/**
 * A key's security settings: what they look like, how they are checked, and how they are prepared for
 * matching.
 *
 * @module
 */
import { parseOriginPattern, type OriginPattern } from './origin-pattern.js';

/** The plugin's name, the key of its settings under `plugins` in the config, and the section of a key's `settings` it reads. */
export const SECURITY_PLUGIN = 'security';

/** Algorithms a key's JWT public keys may use. */
export const JWT_ALGORITHMS = ['RS256', 'ES256'] as const;

/** A JWT signing algorithm. */
export type JwtAlgorithm = (typeof JWT_ALGORITHMS)[number];

/** Most public keys one API key may hold, so a rotation can overlap the old and the new key. */
export const MAX_JWT_KEYS = 3;

/** One public key a key's JWTs may be signed with. */
export interface JwtPublicKey {
  /** Its id: the `kid` of the tokens' header names it. */
  readonly kid: string;
  /** `RS256` (an RSA key) or `ES256` (a P-256 key). */
  readonly alg: JwtAlgorithm;
  /** The public key, PEM (`-----BEGIN PUBLIC KEY-----`, SPKI). */
  readonly publicKey: string;
}

/** A key's JWT settings. */
export interface JwtSettings {
  /** Whether every call must carry a JWT (default true). When false, a JWT that is sent is still checked and its claims still narrow. */
  readonly required?: boolean;
  /** The public keys (1 to 3), by `kid`. */
  readonly keys: readonly JwtPublicKey[];
  /** Audience(s) a token's `aud` must name, when set. */
  readonly audience?: string | readonly string[];
}

/**
 * The security settings of one API key. Every part is optional; a key without settings is not
 * restricted. The allowlists (methods, origins, userAgents, addresses) are ANDed: a call must pass every
 * list that is present; within a list, any one entry suffices; an empty list restricts nothing.
 */
export interface KeySecurity {
  /** JSON-RPC method names the key may call, exactly as clients send them (`eth_call`). */
  readonly methods?: readonly string[];
  /**
   * Values of the `Origin` header the key may be used from: `https://app.example.com`,
   * `https://*.example.com` (any subdomain, not `example.com` itself), `*.example.com` or
   * `app.example.com` (any scheme), `http://localhost:3000` (a port other than the scheme's default).
   */
  readonly origins?: readonly string[];
  /** Substrings of the `User-Agent` header (case-sensitive): `MyDapp/` allows `MyDapp/2.1 (iOS)`. */
  readonly userAgents?: readonly string[];
  /** Contract addresses (0x and 40 hex digits, any case) that the address-taking methods may name. */
  readonly addresses?: readonly string[];
  /** Network toggles by network name: `false` turns a network off for the key; networks not named stay on. */
  readonly networks?: Readonly<Record<string, boolean>>;
  /** Whether every call must carry the key's secret (HTTP basic with an empty user: `curl -u :<secret>`). */
  readonly requireSecret?: boolean;
  /** Whether a call that carries the key's secret skips the allowlists (network toggles still apply). */
  readonly secretSkipsAllowlists?: boolean;
  /** JWT: tokens signed by the key's own signer, in `Authorization: Bearer`. */
  readonly jwt?: JwtSettings;
}

/** The plugin's settings, as `security({...})` takes them and as the config's `plugins.security` holds them. */
export interface SecuritySettings {
  /**
   * Settings by key id, for keys that do not carry their own: a key's `settings.security` (set through
   * the admin API, the CLI or the config's `keys[].settings`) wins over its entry here.
   */
  readonly keys?: Readonly<Record<string, KeySecurity>>;
}

/** One key's allowlists, prepared for matching. `undefined` means "no restriction of this kind". */
export interface CompiledAllowlist {
  /** Allowed method names. */
  readonly methods: ReadonlySet<string> | undefined;
  /** Allowed origins. */
  readonly origins: readonly OriginPattern[] | undefined;
  /** Allowed User-Agent substrings. */
  readonly userAgents: readonly string[] | undefined;
  /** Allowed addresses, lower-cased. */
  readonly addresses: ReadonlySet<string> | undefined;
}

/** One key's security settings, checked and prepared. */
export interface CompiledSecurity {
  /** The allowlists. */
  readonly lists: CompiledAllowlist;
  /** Whether any allowlist is present. */
  readonly hasLists: boolean;
  /** Networks turned off for the key. */
  readonly disabledNetworks: ReadonlySet<string>;
  /** See {@link KeySecurity.requireSecret}. */
  readonly requireSecret: boolean;
  /** See {@link KeySecurity.secretSkipsAllowlists}. */
  readonly secretSkipsAllowlists: boolean;
  /** The JWT settings, when the key has any. */
  readonly jwt: JwtSettings | undefined;
}

const SETTINGS = new Set(['keys']);
const KEY_FIELDS = new Set(['methods', 'origins', 'userAgents', 'addresses', 'networks', 'requireSecret', 'secretSkipsAllowlists', 'jwt']);
const JWT_FIELDS = new Set(['required', 'keys', 'audience']);
const JWT_KEY_FIELDS = new Set(['kid', 'alg', 'publicKey']);
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const METHOD = /^[\x21-\x7e]+$/;
const PEM = /^-----BEGIN PUBLIC KEY-----[\s\S]+-----END PUBLIC KEY-----\s*$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkList(at: string, value: unknown, problems: string[], check: (entry: string) => string | undefined): void {
  if (value === undefined) return;
  if (!Array.isArray(value)) {
    problems.push(`${at}: must be an array of strings`);
    return;
  }
  value.forEach((entry: unknown, i) => {
    if (typeof entry !== 'string' || entry === '') problems.push(`${at}[${i}]: must be a non-empty string`);
    else {
      const problem = check(entry);
      if (problem !== undefined) problems.push(`${at}[${i}]: ${problem}`);
    }
  });
}

function checkBoolean(at: string, value: unknown, problems: string[]): void {
  if (value !== undefined && typeof value !== 'boolean') problems.push(`${at}: must be true or false`);
}

function originProblem(entry: string): string | undefined {
  try {
    parseOriginPattern(entry);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

function checkJwt(at: string, value: unknown, problems: string[]): void {
  if (!isRecord(value)) {
    problems.push(`${at}: must be an object with keys (and optionally required, audience)`);
    return;
  }
  for (const name of Object.keys(value)) if (!JWT_FIELDS.has(name)) problems.push(`${at}.${name}: unknown setting (use required, keys or audience)`);
  checkBoolean(`${at}.required`, value.required, problems);
  if (value.audience !== undefined && !(typeof value.audience === 'string' && value.audience !== '')) {
    checkList(`${at}.audience`, value.audience, problems, () => undefined);
  }
  const keys = value.keys;
  if (!Array.isArray(keys) || keys.length === 0 || keys.length > MAX_JWT_KEYS) {
    problems.push(`${at}.keys: must be an array of 1 to ${MAX_JWT_KEYS} public keys ({ kid, alg, publicKey })`);
    return;
  }
  const kids = new Set<string>();
  keys.forEach((key: unknown, i) => {
    const where = `${at}.keys[${i}]`;
    if (!isRecord(key)) return problems.push(`${where}: must be an object { kid, alg, publicKey }`);
    for (const name of Object.keys(key)) if (!JWT_KEY_FIELDS.has(name)) problems.push(`${where}.${name}: unknown field (use kid, alg or publicKey)`);
    if (typeof key.kid !== 'string' || key.kid === '') problems.push(`${where}.kid: must be a non-empty string`);
    else if (kids.has(key.kid)) problems.push(`${where}.kid: "${key.kid}" is used twice`);
    else kids.add(key.kid);
    if (!JWT_ALGORITHMS.includes(key.alg as JwtAlgorithm)) problems.push(`${where}.alg: must be ${JWT_ALGORITHMS.join(' or ')}`);
    if (typeof key.publicKey !== 'string' || !PEM.test(key.publicKey.trim())) problems.push(`${where}.publicKey: must be a PEM public key (-----BEGIN PUBLIC KEY-----)`);
    return undefined;
  });
}

/**
 * The problems of `value` as one key's security settings, each prefixed with `where`; empty when it is
 * fine. Checks types, list entries (methods, origins, addresses), the JWT keys' shape, and combinations
 * that cannot work (a required secret and a required JWT both need the `Authorization` header).
 */
export function keySecurityProblems(value: unknown, where: string): string[] {
  const problems: string[] = [];
  if (!isRecord(value)) return [`${where}: must be an object`];
  for (const name of Object.keys(value)) if (!KEY_FIELDS.has(name)) problems.push(`${where}.${name}: unknown setting (use ${[...KEY_FIELDS].join(', ')})`);
  checkList(`${where}.methods`, value.methods, problems, (m) => (METHOD.test(m) ? undefined : 'must be a method name without spaces'));
  checkList(`${where}.origins`, value.origins, problems, originProblem);
  checkList(`${where}.userAgents`, value.userAgents, problems, () => undefined);
  checkList(`${where}.addresses`, value.addresses, problems, (a) => (ADDRESS.test(a) ? undefined : 'must be an address: 0x and 40 hex digits'));
  if (value.networks !== undefined) {
    if (!isRecord(value.networks)) problems.push(`${where}.networks: must be an object of network names and true/false`);
    else for (const [name, on] of Object.entries(value.networks)) checkBoolean(`${where}.networks.${name}`, on, problems);
  }
  checkBoolean(`${where}.requireSecret`, value.requireSecret, problems);
  checkBoolean(`${where}.secretSkipsAllowlists`, value.secretSkipsAllowlists, problems);
  if (value.jwt !== undefined) {
    checkJwt(`${where}.jwt`, value.jwt, problems);
    const jwtRequired = isRecord(value.jwt) && value.jwt.required !== false;
    if (jwtRequired && value.requireSecret === true) {
      problems.push(`${where}: requireSecret and a required jwt cannot both be on (both travel in the Authorization header); set jwt.required to false or drop requireSecret`);
    }
  }
  return problems;
}

/**
 * The problems of the plugin's settings (`security({...})` or the config's `plugins.security`), named
 * `where` in messages.
 */
export function securitySettingsProblems(where: string, source: Readonly<Record<string, unknown>> | undefined): string[] {
  if (source === undefined) return [];
  const problems: string[] = [];
  for (const name of Object.keys(source)) if (!SETTINGS.has(name)) problems.push(`${where}.${name}: unknown setting (use keys)`);
  if (source.keys !== undefined) {
    if (!isRecord(source.keys)) problems.push(`${where}.keys: must be an object of key ids`);
    else for (const [id, entry] of Object.entries(source.keys)) problems.push(...keySecurityProblems(entry, `${where}.keys.${id}`));
  }
  return problems;
}

/** Prepares settings that passed {@link keySecurityProblems} for matching. */
export function compileSecurity(entry: KeySecurity): CompiledSecurity {
  const some = <T>(list: readonly T[] | undefined): list is readonly T[] => list !== undefined && list.length > 0;
  const lists: CompiledAllowlist = {
    methods: some(entry.methods) ? new Set(entry.methods) : undefined,
    origins: some(entry.origins) ? entry.origins.map(parseOriginPattern) : undefined,
    userAgents: some(entry.userAgents) ? [...entry.userAgents] : undefined,
    addresses: some(entry.addresses) ? new Set(entry.addresses.map((a) => a.toLowerCase())) : undefined,
  };
  return {
    lists,
    hasLists: Object.values(lists).some((list) => list !== undefined),
    disabledNetworks: new Set(Object.entries(entry.networks ?? {}).filter(([, on]) => !on).map(([name]) => name)),
    requireSecret: entry.requireSecret === true,
    secretSkipsAllowlists: entry.secretSkipsAllowlists === true,
    jwt: entry.jwt,
  };
}
