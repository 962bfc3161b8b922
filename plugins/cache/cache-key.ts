import { createHash } from 'node:crypto';

const HEX = /^0x[0-9a-fA-F]*$/;

/**
 * The params in one canonical text: object members sorted by name, hex strings (addresses, hashes,
 * quantities as sent) lower-cased, so calls that mean the same share an entry. Other strings (Solana's
 * base58 keys, which are case-sensitive) are kept as they are.
 */
export function canonicalParams(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(HEX.test(value) ? value.toLowerCase() : value);
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : canonicalParams(item))).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const members = Object.keys(value)
      .filter((name) => (value as Record<string, unknown>)[name] !== undefined)
      .sort()
      .map((name) => `${JSON.stringify(name)}:${canonicalParams((value as Record<string, unknown>)[name])}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** Canonical params up to this length stay in the key as they are: no longer than the digest would be. */
const MAX_CLEAR_PARAMS = 43;

/**
 * The store key of a call: network and method in clear (for operators reading a store), the params as a
 * SHA-256 digest so a large `eth_call` input does not make a large key; `head` is the tracked head
 * height for reads resolved against it. Params whose canonical text is no longer than a digest (`[]`,
 * `["latest",false]`) are kept in clear after a `=`, which a base64url digest never holds: a hit on the
 * commonest calls skips hashing, and the key is no longer.
 */
export function cacheKey(network: string, method: string, params: unknown, head?: number): string {
  const canonical = canonicalParams(params);
  const part = canonical.length <= MAX_CLEAR_PARAMS ? `=${canonical}` : createHash('sha256').update(canonical).digest('base64url');
  return head === undefined ? `${network}:${method}:${part}` : `${network}:${method}:${part}@${head}`;
}
