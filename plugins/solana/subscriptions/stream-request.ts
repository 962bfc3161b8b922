/**
 * Reads a validated Solana subscribe call into a stream request whose key is the same for equal
 * requests written differently.
 *
 * @module
 */
import type { StreamRequest, SubscriptionMethod } from '../../../core/family-api.js';

/**
 * `value` with object members sorted and `null` members dropped (agave reads a `null` as an absent field),
 * so equal configs give equal text. Strings are kept as they are: base-58 is case-sensitive.
 */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const member = (value as Record<string, unknown>)[key];
    if (member !== null && member !== undefined) out[key] = canonical(member);
  }
  return out;
}

/** The position of each subscribe method's config object (`params[1]`, none for the bare streams). */
const CONFIG_AT: Readonly<Record<string, number>> = { accountSubscribe: 1, blockSubscribe: 1, logsSubscribe: 1, programSubscribe: 1, signatureSubscribe: 1 };

/**
 * The stream of a validated Solana subscribe call: its kind is the notification method (each method
 * has its own price); its key and upstream params are the call's params with configs in one form and
 * the node's default commitment (`finalized`) written out, so `[addr]` and `[addr, {commitment: "finalized"}]`
 * share one upstream subscription.
 */
export function solanaStreamRequest(params: unknown, method: SubscriptionMethod): StreamRequest {
  const given = (params ?? []) as readonly unknown[];
  const at = CONFIG_AT[method.subscribe];
  let upstream: unknown[] = given.map(canonical);
  if (at !== undefined) {
    const config = (upstream[at] ?? {}) as Record<string, unknown>;
    upstream = [...upstream.slice(0, at), canonical({ ...config, commitment: config.commitment ?? 'finalized' })];
  }
  return { kind: method.notification, key: JSON.stringify(upstream), params: upstream };
}

/** The commitment a stream asked for (written out by {@link solanaStreamRequest}), `finalized` for the bare streams. */
export function commitmentOf(request: StreamRequest): string {
  const config = request.params[1] as { commitment?: string } | undefined;
  return config?.commitment ?? 'finalized';
}
