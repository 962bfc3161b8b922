import type { RequestContext } from '../contracts/request-context.js';
import type { Upstream } from '../contracts/upstream.js';
import type { FailoverSettings } from './failover-settings.js';
import type { UpstreamSelector } from '../contracts/selector.js';

/**
 * How long a hedged read waits for its first upstream before asking a second: `latencyMultiplier` times
 * the lowest measured latency among the call's upstreams, at least `minDelayMs`.
 */
export function hedgeDelay(policy: FailoverSettings, candidates: readonly Upstream[], selector: UpstreamSelector): number {
  let fastest = Infinity;
  for (const upstream of candidates) {
    const latency = selector.latencyMs?.(upstream);
    if (latency !== undefined && latency < fastest) fastest = latency;
  }
  const derived = fastest === Infinity ? 0 : fastest * policy.hedge.latencyMultiplier;
  return Math.max(policy.hedge.minDelayMs, Math.ceil(derived));
}

/**
 * The upstream a hedge goes to: the next primary after `from` that serves the method, has no budget
 * (a hedge never spends a provider's plan) and is admitted by the selector now.
 */
export function hedgeTarget(candidates: readonly Upstream[], from: number, method: string, selector: UpstreamSelector, ctx: RequestContext): Upstream | undefined {
  for (let k = from + 1; k < candidates.length; k++) {
    const upstream = candidates[k]!;
    if (upstream.settings.role !== 'primary' || upstream.settings.budget !== undefined) continue;
    if (selector.methodBan?.(upstream, method) !== undefined) continue;
    if (selector.admit !== undefined && !selector.admit(upstream, ctx)) continue;
    return upstream;
  }
  return undefined;
}
