/**
 * A key's security settings: what they look like, how they are checked, and how they are prepared for
 * matching.
 *
 * @module
 */
import { AddressRanges, addressRangeProblem, settingsProblems, type SettingsSchema } from '../../core/plugin-api.js';
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
  /**
   * Client addresses the key may be used from: addresses, CIDR ranges (`203.0.113.0/24`, `2001:db8::/32`)
   * and the keywords `loopback`, `private`, `linklocal`. Behind a balancer, the client's address is the
   * one `server.trustedProxies` lets the gateway read from `X-Forwarded-For`.
   */
  readonly clientAddresses?: readonly string[];
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
  /** Client addresses the calls may come from. */
  readonly clientAddresses?: AddressRanges | undefined;
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

const NON_EMPTY = 'must be a non-empty string';

/** A list of strings, each held to `item` (a string schema), worded per keyword. */
function list(item: Readonly<Record<string, unknown>>, problem?: string): Readonly<Record<string, unknown>> {
  return {
    type: 'array',
    items: { type: 'string', minLength: 1, ...item, problem: { type: NON_EMPTY, minLength: NON_EMPTY, ...(problem === undefined ? {} : { pattern: problem }) } },
    problem: 'must be an array of strings',
  };
}

const BOOLEAN = { type: 'boolean', problem: 'must be true or false' } as const;
// An origin entry: `[scheme://][*.]host[:port]`, any case, no path, a port of 1-65535 (see parseOriginPattern).
const ORIGIN = '^(?:[a-zA-Z][a-zA-Z0-9+.-]*://)?(?:\\*\\.)?[a-zA-Z0-9-]+(?:\\.[a-zA-Z0-9-]+)*(?::(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?$';

/** The JSON Schema of one key's security settings (a key's `settings.security`, an entry of the plugin's `keys`). */
export const KEY_SECURITY_SCHEMA: SettingsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    methods: list({ pattern: '^[\\x21-\\x7e]+$' }, 'must be a method name without spaces'),
    origins: list({ pattern: ORIGIN }, 'must be an origin such as https://app.example.com, https://*.example.com or *.example.com (no path, "*." only at the start)'),
    userAgents: list({}),
    addresses: list({ pattern: '^0x[0-9a-fA-F]{40}$' }, 'must be an address: 0x and 40 hex digits'),
    clientAddresses: list({}),
    networks: { type: 'object', additionalProperties: BOOLEAN, problem: 'must be an object of network names and true/false' },
    requireSecret: BOOLEAN,
    secretSkipsAllowlists: BOOLEAN,
    jwt: {
      type: 'object',
      additionalProperties: false,
      required: ['keys'],
      properties: {
        required: BOOLEAN,
        audience: { anyOf: [{ type: 'string', minLength: 1 }, { type: 'array', items: { type: 'string', minLength: 1 } }], problem: 'must be a non-empty string or an array of them' },
        keys: {
          type: 'array',
          minItems: 1,
          maxItems: MAX_JWT_KEYS,
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['kid', 'alg', 'publicKey'],
            properties: {
              kid: { type: 'string', minLength: 1, problem: NON_EMPTY },
              alg: { enum: JWT_ALGORITHMS, problem: `must be ${JWT_ALGORITHMS.join(' or ')}` },
              publicKey: { type: 'string', pattern: '^\\s*-----BEGIN PUBLIC KEY-----[\\s\\S]+-----END PUBLIC KEY-----\\s*$', problem: 'must be a PEM public key (-----BEGIN PUBLIC KEY-----)' },
            },
            problem: { type: 'must be an object { kid, alg, publicKey }' },
          },
          problem: `must be an array of 1 to ${MAX_JWT_KEYS} public keys ({ kid, alg, publicKey })`,
        },
      },
      problem: { type: 'must be an object with keys (and optionally required, audience)' },
    },
  },
  // Both travel in the Authorization header.
  not: {
    type: 'object',
    required: ['requireSecret', 'jwt'],
    properties: { requireSecret: { const: true }, jwt: { type: 'object', not: { type: 'object', required: ['required'], properties: { required: { const: false } } } } },
  },
  problem: {
    type: 'must be an object',
    not: 'requireSecret and a required jwt cannot both be on (both travel in the Authorization header); set jwt.required to false or drop requireSecret',
  },
} as const;

/** The JSON Schema of the plugin's settings (`security({...})`, the config's `plugins.security`). */
export const SECURITY_SETTINGS_SCHEMA: SettingsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { keys: { type: 'object', additionalProperties: KEY_SECURITY_SCHEMA, problem: { type: 'must be an object of key ids' } } },
} as const;

/** What the schema cannot say: a key's JWT public keys have distinct `kid`s, and its client addresses are addresses or ranges. */
function refinementProblems(entry: KeySecurity, at = ''): string[] {
  const kids = new Set<string>();
  const problems: string[] = [];
  entry.clientAddresses?.forEach((item, i) => {
    const problem = addressRangeProblem(item);
    if (problem !== undefined) problems.push(`${at}clientAddresses[${i}]: ${problem}`);
  });
  entry.jwt?.keys.forEach((key, i) => {
    if (kids.has(key.kid)) problems.push(`${at}jwt.keys[${i}].kid: "${key.kid}" is used twice`);
    else kids.add(key.kid);
  });
  return problems;
}

/**
 * The problems of `value` as one key's security settings, each prefixed with `where`; empty when it is
 * fine. Checked against `KEY_SECURITY_SCHEMA` by core's validator (types, list entries, the JWT keys'
 * shape, a required secret with a required JWT), then for distinct JWT key ids.
 */
export function keySecurityProblems(value: unknown, where: string): string[] {
  return settingsProblems<KeySecurity>(KEY_SECURITY_SCHEMA, value, where, (entry) => refinementProblems(entry));
}

/**
 * The problems of the plugin's settings (`security({...})` or the config's `plugins.security`), named
 * `where` in messages.
 */
export function securitySettingsProblems(where: string, source: unknown): string[] {
  if (source === undefined) return [];
  return settingsProblems<SecuritySettings>(SECURITY_SETTINGS_SCHEMA, source, where, (settings) =>
    Object.entries(settings.keys ?? {}).flatMap(([id, entry]) => refinementProblems(entry, `keys.${id}.`)),
  );
}

/** Prepares settings that passed `keySecurityProblems` for matching. */
export function compileSecurity(entry: KeySecurity): CompiledSecurity {
  const some = <T>(list: readonly T[] | undefined): list is readonly T[] => list !== undefined && list.length > 0;
  const lists: CompiledAllowlist = {
    methods: some(entry.methods) ? new Set(entry.methods) : undefined,
    origins: some(entry.origins) ? entry.origins.map(parseOriginPattern) : undefined,
    userAgents: some(entry.userAgents) ? [...entry.userAgents] : undefined,
    addresses: some(entry.addresses) ? new Set(entry.addresses.map((a) => a.toLowerCase())) : undefined,
    clientAddresses: some(entry.clientAddresses) ? new AddressRanges(entry.clientAddresses) : undefined,
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
