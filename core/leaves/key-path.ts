/**
 * Reads the API key from the path after a network's prefix, e.g. `/v3/<API_KEY>` for `prefix` `/v3`
 * (a trailing slash allowed). Transports that carry the key in the path share this reading.
 * Returns undefined when the path is not a JSON-RPC path at all, and `''` when the key is missing.
 */
export function apiKeyFromPath(rest: string, prefix: string): string | undefined {
  if (rest === prefix || rest === `${prefix}/`) return '';
  if (!rest.startsWith(`${prefix}/`)) return undefined;
  const key = rest.slice(prefix.length + 1).replace(/\/$/, '');
  if (key.includes('/')) return undefined;
  try {
    return decodeURIComponent(key);
  } catch {
    // A malformed escape cannot be a valid key; keep it as sent so it is refused like any unknown key.
    return key;
  }
}
