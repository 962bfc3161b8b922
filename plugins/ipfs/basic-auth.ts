/** HTTP basic credentials: the API key (user) and its secret (password). */
export interface BasicCredentials {
  /** The user: the API key. */
  readonly user: string;
  /** The password: the key's secret. */
  readonly password: string;
}

/** Reads `Authorization: Basic <base64(user:password)>`; undefined when absent or malformed. */
export function parseBasicAuth(header: string | undefined): BasicCredentials | undefined {
  if (header === undefined) return undefined;
  const match = /^Basic[ \t]+([A-Za-z0-9+/]+={0,2})[ \t]*$/i.exec(header);
  if (match === null) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return undefined;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}
