/**
 * Origin allowlist entries: parsing and matching against the `Origin` header.
 *
 * @module
 */

/** An origin allowlist entry, parsed. */
export interface OriginPattern {
  /** The entry as configured. */
  readonly source: string;
  /** Required scheme (`https`), or undefined for any. */
  readonly scheme: string | undefined;
  /** True for `*.host`: any subdomain of `host`, at any depth, but not `host` itself. */
  readonly wildcard: boolean;
  /** Host name, lower-cased (without the `*.`). */
  readonly host: string;
  /** Required port, or undefined for the scheme's default port. */
  readonly port: number | undefined;
}

const DEFAULT_PORTS: Readonly<Record<string, number>> = { http: 80, https: 443, ws: 80, wss: 443 };
const ENTRY = /^(?:([a-z][a-z0-9+.-]*):\/\/)?(\*\.)?([a-z0-9-]+(?:\.[a-z0-9-]+)*)(?::(\d{1,5}))?$/;

/**
 * Parses an origin entry: `[scheme://][*.]host[:port]`, case-insensitive, without a path.
 *
 * @throws Error saying what is wrong with the entry.
 */
export function parseOriginPattern(entry: string): OriginPattern {
  const match = ENTRY.exec(entry.toLowerCase());
  if (match === null) {
    throw new Error(`must be an origin such as https://app.example.com, https://*.example.com or *.example.com (no path, "*." only at the start; got "${entry}")`);
  }
  const [, scheme, star, host, portText] = match;
  let port = portText === undefined ? undefined : Number(portText);
  if (port !== undefined && (port < 1 || port > 65_535)) throw new Error(`port must be 1-65535 (got "${entry}")`);
  if (scheme !== undefined && port === DEFAULT_PORTS[scheme]) port = undefined;
  return { source: entry, scheme, wildcard: star !== undefined, host: host!, port };
}

/**
 * Whether an `Origin` header value matches `pattern`. The opaque origin `null` (sandboxed frames, `file:`
 * pages) and anything that is not a URL match nothing.
 */
export function originMatches(pattern: OriginPattern, origin: string): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  const scheme = url.protocol.slice(0, -1);
  if (url.hostname === '' || (pattern.scheme !== undefined && pattern.scheme !== scheme)) return false;
  const defaultPort = DEFAULT_PORTS[scheme];
  const port = url.port === '' ? defaultPort : Number(url.port);
  if (pattern.port === undefined ? port !== defaultPort : port !== pattern.port) return false;
  const host = url.hostname;
  return pattern.wildcard ? host.length > pattern.host.length + 1 && host.endsWith(`.${pattern.host}`) : host === pattern.host;
}
