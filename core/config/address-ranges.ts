/**
 * Lists of client or peer addresses, as `server.trustedProxies` and address allowlists write them:
 * addresses, CIDR ranges (IPv4 and IPv6) and keywords for the usual ranges.
 *
 * @module
 */
import { BlockList, isIP } from 'node:net';

/** The ranges each keyword of an address list stands for. */
export const ADDRESS_KEYWORDS: Readonly<Record<string, readonly string[]>> = Object.freeze({
  loopback: ['127.0.0.0/8', '::1/128'],
  private: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
});

interface Range {
  readonly address: string;
  readonly prefix: number;
  readonly family: 'ipv4' | 'ipv6';
}

/** One address or CIDR range, or why it is not one. */
function parseRange(entry: string): Range | string {
  const slash = entry.indexOf('/');
  const address = slash === -1 ? entry : entry.slice(0, slash);
  const version = isIP(address);
  if (version === 0) return `"${entry}" is not an address, a CIDR range (10.0.0.0/8, fd00::/8) or one of ${Object.keys(ADDRESS_KEYWORDS).join(', ')}`;
  const family = version === 4 ? 'ipv4' : 'ipv6';
  const bits = version === 4 ? 32 : 128;
  if (slash === -1) return { address, prefix: bits, family };
  const text = entry.slice(slash + 1);
  const prefix = /^[0-9]{1,3}$/.test(text) ? Number(text) : NaN;
  if (!(prefix >= 0 && prefix <= bits)) return `"${entry}": the prefix length must be 0 to ${bits}`;
  return { address, prefix, family };
}

/** Why `entry` is not a valid entry of an address list, or undefined when it is. */
export function addressRangeProblem(entry: string): string | undefined {
  if (ADDRESS_KEYWORDS[entry] !== undefined) return undefined;
  const range = parseRange(entry);
  return typeof range === 'string' ? range : undefined;
}

/**
 * A compiled address list (`server.trustedProxies`, an address allowlist): whether an address is in it.
 * IPv4 addresses seen as IPv6 (`::ffff:10.0.0.1`, as a dual-stack socket reports them) match the IPv4
 * ranges.
 *
 * @example
 * ```ts
 * const proxies = new AddressRanges(['loopback', '10.0.0.0/8']);
 * proxies.includes('::ffff:10.1.2.3'); // true
 * ```
 */
export class AddressRanges {
  readonly #list = new BlockList();
  /** Whether any entry was given. */
  readonly any: boolean;

  /** Compiles entries that passed {@link addressRangeProblem}; a bad entry throws a TypeError naming it. */
  constructor(entries: readonly string[]) {
    this.any = entries.length > 0;
    for (const entry of entries) {
      for (const item of ADDRESS_KEYWORDS[entry] ?? [entry]) {
        const range = parseRange(item);
        if (typeof range === 'string') throw new TypeError(range);
        this.#list.addSubnet(range.address, range.prefix, range.family);
      }
    }
  }

  /** Whether `address` (as a socket or a forwarding header gives it) is in the list. */
  includes(address: string): boolean {
    if (!this.any) return false;
    const version = isIP(address);
    if (version === 0) return false;
    return this.#list.check(address, version === 4 ? 'ipv4' : 'ipv6');
  }
}
