/**
 * Reads the API key from the path after a network's prefix: `/v3/<API_KEY>` (a trailing slash allowed).
 * Returns undefined when the path is not a JSON-RPC path at all, and `''` when the key is missing.
 */
export function apiKeyFromPath(rest: string, prefix = '/v3'): string | undefined {
  if (rest === prefix || rest === `${prefix}/`) return '';
  if (!rest.startsWith(`${prefix}/`)) return undefined;
  const key = rest.slice(prefix.length + 1).replace(/\/$/, '');
  return key.includes('/') ? undefined : decodeURIComponent(key);
}
