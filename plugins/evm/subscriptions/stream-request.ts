/**
 * Reads a validated `eth_subscribe` call into a stream request whose key is the same for equal filters.
 *
 * @module
 */
import type { StreamRequest } from '../../../core/family-api.js';
import type { SubscriptionKind } from './methods.js';

type Topic = string | null | readonly (string | null)[];

/** One address list, lower-cased, sorted and without repeats; `null` for any address. */
function normalAddresses(value: unknown): string[] | null {
  if (value === undefined || value === null) return null;
  const list = (Array.isArray(value) ? value : [value]) as string[];
  if (list.length === 0) return null;
  return [...new Set(list.map((a) => a.toLowerCase()))].sort();
}

/**
 * Topic positions as geth matches them: `null` (or an empty list, or a list holding `null`) matches
 * anything; a list matches any of its topics. Trailing wildcards are dropped: they constrain nothing.
 */
function normalTopics(value: unknown): Topic[] {
  const positions = (value ?? []) as Topic[];
  const out: Topic[] = positions.map((p) => {
    if (p === null) return null;
    if (typeof p === 'string') return p.toLowerCase();
    if (p.length === 0 || p.includes(null)) return null;
    const set = [...new Set(p.map((t) => (t as string).toLowerCase()))].sort();
    return set.length === 1 ? set[0]! : set;
  });
  while (out.length > 0 && out[out.length - 1] === null) out.pop();
  return out;
}

/** The stream of a validated `eth_subscribe` params array. */
export function evmStreamRequest(params: unknown): StreamRequest {
  const [kind, filter] = params as [SubscriptionKind, { address?: unknown; topics?: unknown } | undefined];
  if (kind !== 'logs') return { kind, key: kind, params: [kind] };
  const address = normalAddresses(filter?.address);
  const topics = normalTopics(filter?.topics);
  const upstream: Record<string, unknown> = {};
  if (address !== null) upstream.address = address;
  if (topics.length > 0) upstream.topics = topics;
  return { kind, key: `logs:${JSON.stringify(upstream)}`, params: ['logs', upstream] };
}
