/**
 * Reads the API key from the path after a network's prefix, e.g. `/v3/<API_KEY>` for `prefix` `/v3`
 * (a trailing slash allowed). Transports that carry the key in the path share this reading.
 * Returns undefined when the path is not a JSON-RPC path at all, and `''` when the key is missing.
 */
export function apiKeyFromPath(rest: string, prefix: string): string | undefined {
  // Runs on every request: compares in place instead of building `${prefix}/` and matching expressions.
  const at = prefix.length;
  if (!rest.startsWith(prefix) || (rest.length > at && rest.charCodeAt(at) !== SLASH)) return undefined;
  if (rest.length <= at + 1) return rest.length === at || rest.length === at + 1 ? '' : undefined;
  const end = rest.charCodeAt(rest.length - 1) === SLASH ? rest.length - 1 : rest.length;
  const key = rest.slice(at + 1, end);
  if (key.includes('/')) return undefined;
  if (!key.includes('%')) return key;
  try {
    return decodeURIComponent(key);
  } catch {
    // A malformed escape cannot be a valid key; keep it as sent so it is refused like any unknown key.
    return key;
  }
}

const SLASH = 0x2f;
