/**
 * Settings of the allowlist plugin: what they look like, how they are checked, and how the code's and
 * the config's layers combine.
 *
 * @module
 */
import { ConfigError } from 'tollgate';
import { parseOriginPattern, type OriginPattern } from './origin-pattern.js';

/** The plugin's name, and the key of its settings under `plugins` in the gateway config. */
export const ALLOWLIST_PLUGIN = 'allowlist';

/**
 * The allowlists of one API key. Every list is optional: a list that is absent, or empty, does not
 * restrict anything. A call must pass every list that is present; within a list, any one entry suffices.
 */
export interface KeyAllowlist {
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
  /**
   * Contract addresses (0x and 40 hex digits, any case) that the address-taking methods may name; see
   * {@link ADDRESS_METHODS}. Other methods are not affected.
   */
  readonly addresses?: readonly string[];
}

/** The plugin's settings, as `allowlist({...})` takes them and as the config's `plugins.allowlist` holds them. */
export interface AllowlistSettings {
  /** Allowlists by key id (the `id` of a key in the config, or of a managed key). Keys without an entry are not restricted. */
  readonly keys?: Readonly<Record<string, KeyAllowlist>>;
}

/** One key's allowlists, checked and prepared for matching. `undefined` means "no restriction of this kind". */
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

const SETTINGS = new Set(['keys']);
const LISTS = new Set(['methods', 'origins', 'userAgents', 'addresses']);
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const METHOD = /^[\x21-\x7e]+$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function readList(at: string, value: unknown, problems: string[], check: (entry: string) => string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) {
    problems.push(`${at}: must be an array of strings`);
    return undefined;
  }
  const out: string[] = [];
  value.forEach((entry: unknown, i) => {
    if (typeof entry !== 'string' || entry === '') {
      problems.push(`${at}[${i}]: must be a non-empty string`);
      return;
    }
    const problem = check(entry);
    if (problem !== undefined) problems.push(`${at}[${i}]: ${problem}`);
    else out.push(entry);
  });
  return out;
}

function readKey(at: string, value: unknown, problems: string[]): KeyAllowlist | undefined {
  if (!isRecord(value)) {
    problems.push(`${at}: must be an object with methods, origins, userAgents and/or addresses`);
    return undefined;
  }
  for (const name of Object.keys(value)) if (!LISTS.has(name)) problems.push(`${at}.${name}: unknown list (use methods, origins, userAgents or addresses)`);
  const methods = readList(`${at}.methods`, value.methods, problems, (m) => (METHOD.test(m) ? undefined : 'must be a method name without spaces'));
  const origins = readList(`${at}.origins`, value.origins, problems, (o) => {
    try {
      parseOriginPattern(o);
      return undefined;
    } catch (error) {
      return (error as Error).message;
    }
  });
  const userAgents = readList(`${at}.userAgents`, value.userAgents, problems, () => undefined);
  const addresses = readList(`${at}.addresses`, value.addresses, problems, (a) => (ADDRESS.test(a) ? undefined : 'must be an address: 0x and 40 hex digits'));
  return {
    ...(methods === undefined ? {} : { methods }),
    ...(origins === undefined ? {} : { origins }),
    ...(userAgents === undefined ? {} : { userAgents }),
    ...(addresses === undefined ? {} : { addresses }),
  };
}

/**
 * Checks one layer of settings (`allowlist({...})` or the config's `plugins.allowlist`), named `where` in
 * messages.
 *
 * @throws ConfigError naming every problem, each with its path (`plugins.allowlist.keys.acme.origins[0]: ...`).
 */
export function readAllowlistSettings(where: string, source: Readonly<Record<string, unknown>> | undefined): AllowlistSettings {
  if (source === undefined) return {};
  const problems: string[] = [];
  for (const name of Object.keys(source)) if (!SETTINGS.has(name)) problems.push(`${where}.${name}: unknown setting (use keys)`);
  const keys: Record<string, KeyAllowlist> = {};
  if (source.keys !== undefined) {
    if (!isRecord(source.keys)) problems.push(`${where}.keys: must be an object of key ids`);
    else {
      for (const [id, entry] of Object.entries(source.keys)) {
        const read = readKey(`${where}.keys.${id}`, entry, problems);
        if (read !== undefined) keys[id] = read;
      }
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return source.keys === undefined ? {} : { keys };
}

function compile(entry: KeyAllowlist): CompiledAllowlist {
  const some = <T>(list: readonly T[] | undefined): list is readonly T[] => list !== undefined && list.length > 0;
  return {
    methods: some(entry.methods) ? new Set(entry.methods) : undefined,
    origins: some(entry.origins) ? entry.origins.map(parseOriginPattern) : undefined,
    userAgents: some(entry.userAgents) ? [...entry.userAgents] : undefined,
    addresses: some(entry.addresses) ? new Set(entry.addresses.map((a) => a.toLowerCase())) : undefined,
  };
}

/**
 * Combines settings layers, later ones winning per key: a key's entry in a later layer replaces its whole
 * entry in an earlier one (lists are not merged), so the config can tighten or loosen what the code set.
 * Keys whose entry restricts nothing are left out.
 */
export function resolveAllowlists(layers: readonly AllowlistSettings[]): ReadonlyMap<string, CompiledAllowlist> {
  const entries: Record<string, KeyAllowlist> = {};
  for (const layer of layers) Object.assign(entries, layer.keys);
  const out = new Map<string, CompiledAllowlist>();
  for (const [id, entry] of Object.entries(entries)) {
    const compiled = compile(entry);
    if (Object.values(compiled).some((list) => list !== undefined)) out.set(id, compiled);
  }
  return out;
}
