import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/types.js';
import type { RequestContext } from '../contracts/request-context.js';
import type { Network } from '../contracts/request-context.js';
import { failoverEligible, resolveFailoverSettings } from './failover-settings.js';
import { NetworkHealth } from './network-health.js';
import type { UpstreamSelector, UpstreamStatus } from '../contracts/selector.js';
import type { Upstream } from '../contracts/upstream.js';
import type { UpstreamFailure } from '../contracts/upstream-failure.js';
import type { UpstreamHealth } from './upstream-health.js';
import type { SharedHeads } from '../contracts/shared-heads.js';

/** Options of {@link FailoverSelector}. */
export interface FailoverSelectorOptions {
  /** The gateway config: its `failover` section and each network's own `failover`. */
  readonly config: GatewayConfig;
  /** Where breaker transitions are logged. */
  readonly logger?: Logger;
  /**
   * The deployment's shared heads, resolved when the selector starts (a store plugin may replace the
   * default after the selector was made). Without it, head floors are this instance's own.
   */
  readonly sharedHeads?: () => SharedHeads | undefined;
}

/**
 * The default {@link UpstreamSelector}: health-aware routing with failover to partner providers.
 *
 * - **Health.** Each upstream has a circuit breaker fed by calls (connect errors, timeouts, resets, HTTP
 *   5xx and 429, provider capacity errors) and by active probes (the family's probe, e.g.
 *   `eth_blockNumber`, on networks with two or more upstreams). A probe answering a number also reports the
 *   upstream's head; a primary further than `maxLagBlocks` behind the highest head of the live primaries
 *   gets no traffic, and its probes count as failures until it catches up.
 * - **Choice.** A call starts on a live primary at the highest head, the one with the fewest calls in
 *   flight per unit of weight; the other live primaries follow for retries; partner providers follow when
 *   the method and the key's plan are eligible. See docs/failover.md for the exact rules.
 * - **Visibility.** {@link FailoverSelector.status} reports every upstream's breaker, head, lag, latency
 *   and counters (attempts, retries, failovers, breaker transitions).
 *
 * Health timing uses the monotonic `performance.now()`, not the gateway's clock (which tests move to
 * cross UTC days).
 */
export class FailoverSelector implements UpstreamSelector {
  readonly #config: GatewayConfig;
  readonly #logger: Logger | undefined;
  readonly #networks = new Map<Network, NetworkHealth>();
  readonly #health = new Map<Upstream, { network: NetworkHealth; health: UpstreamHealth }>();
  readonly #byName = new Map<string, NetworkHealth>();
  readonly #sharedHeadsOf: (() => SharedHeads | undefined) | undefined;
  #sharedHeads: SharedHeads | undefined;
  // The half-open trial each call holds, by call: given back when the call sends nothing after all.
  readonly #trials = new WeakMap<object, UpstreamHealth>();

  constructor(options: FailoverSelectorOptions) {
    this.#config = options.config;
    this.#logger = options.logger;
    this.#sharedHeadsOf = options.sharedHeads;
  }

  /**
   * Tracks the networks, listens to the deployment's shared heads (every rise raises the network's head
   * floor) and starts active probes where they apply.
   */
  start(networks: readonly Network[]): void {
    const shared = this.#sharedHeadsOf?.();
    this.#sharedHeads = shared;
    shared?.onRaise((key, head) => this.#byName.get(key.network)?.raiseFloor(key.scope, head));
    for (const network of networks) this.#track(network).startProbing();
  }

  /** The head floor of `network` in `scope`: the highest head shown by any upstream of the deployment. */
  headFloor(network: Network, scope: string): number | undefined {
    return this.#networks.get(network)?.floor(scope);
  }

  /** The network head `upstream` last reported, as a probe or an answer in the network's scope showed it. */
  headOf(upstream: Upstream): number | undefined {
    return this.#health.get(upstream)?.health.head;
  }

  /**
   * An answer of `upstream` showed `head` in `scope`: for the network's own scope that is the upstream's
   * head now (as a probe would report it); any scope's floor rises with it, here and, through the shared
   * heads, on every instance.
   */
  observeHead(upstream: Upstream, scope: string, head: number): void {
    const entry = this.#health.get(upstream);
    if (entry === undefined) return;
    if (scope === '') entry.network.answerHead(entry.health, head);
    this.#raise(entry.network, scope, head);
  }

  /** The upstream's moving average latency, ms. */
  latencyMs(upstream: Upstream): number | undefined {
    return this.#health.get(upstream)?.health.latencyMs;
  }

  /** The node's words when `upstream` is skipped for `method`; undefined when it may take it (a ban expired). */
  methodBan(upstream: Upstream, method: string): string | undefined {
    const bans = this.#health.get(upstream)?.health.methodBans;
    if (bans === undefined || bans.size === 0) return undefined;
    const ban = bans.get(method);
    if (ban === undefined) return undefined;
    if (performance.now() < ban.until) return ban.message;
    bans.delete(method);
    return undefined;
  }

  /** Skips `upstream` for `method` for the network's `methodBanMs` (none when 0). */
  onMethodNotFound(upstream: Upstream, method: string, message: string): void {
    const entry = this.#health.get(upstream);
    if (entry === undefined) return;
    const banMs = entry.network.settings.methodBanMs;
    if (banMs <= 0) return;
    entry.health.methodBans.set(method, { until: performance.now() + banMs, message });
    this.#logger?.info({ network: entry.network.network.name, upstream: upstream.name, method, banMs }, 'upstream does not serve the method: skipped for it');
  }

  #raise(network: NetworkHealth, scope: string, head: number): void {
    if (network.raiseFloor(scope, head)) this.#sharedHeads?.offer({ network: network.network.name, scope }, head);
  }

  /** Stops every probe. */
  async stop(): Promise<void> {
    await Promise.allSettled([...this.#networks.values()].map((n) => n.stopProbing()));
  }

  /** The upstreams to try for the call, best first; partners last, for eligible calls only. */
  select(ctx: RequestContext): readonly Upstream[] {
    const network = this.#networks.get(ctx.network) ?? this.#track(ctx.network);
    return network.select(failoverEligible(network.settings, ctx), ctx);
  }

  /**
   * Skips an upstream that may not take this call now (its breaker opened since the call was routed, or
   * it is half-open and this call is not its trial); counts attempts, retries and failovers.
   */
  admit(upstream: Upstream, ctx: RequestContext): boolean {
    const entry = this.#health.get(upstream);
    if (entry === undefined) return true;
    const { health, network } = entry;
    const breaker = health.breaker;
    if (breaker.state !== 'closed') {
      // Half-open without probes: a primary takes the call the selector made its trial; a partner, the
      // first call that reaches it (partners are only ever a last resort).
      if (breaker.state === 'open' || network.probing) return false;
      if (health.trialCall === ctx) health.trialCall = undefined;
      else if (upstream.settings.role !== 'partner' || !breaker.claimTrial(performance.now(), upstream.settings.timeoutMs)) return false;
      this.#trials.set(ctx, health);
    } else if (health.lagging && !network.servesLagging() && ctx.attempts === 0) {
      // A lagging primary takes no first attempt while another primary is usable; it is asked once a
      // node before it in the call's order was asked and gave no answer the client can have.
      return false;
    }
    const counters = health.counters;
    counters.attempts++;
    if (ctx.attempts > 0) counters.retries++;
    if (upstream.settings.role === 'partner') counters.failovers++;
    return true;
  }

  /**
   * An admitted attempt was not sent (the upstream's budget refused it): a half-open trial it held is
   * given up at once, so the next call may make it rather than wait out the trial's hold, and its counters
   * are taken back.
   */
  release(upstream: Upstream, ctx: RequestContext): void {
    const entry = this.#health.get(upstream);
    if (entry === undefined) return;
    const { health } = entry;
    if (this.#trials.get(ctx) === health) {
      this.#trials.delete(ctx);
      health.breaker.releaseTrial();
    }
    const counters = health.counters;
    counters.attempts--;
    if (ctx.attempts > 0) counters.retries--;
    if (upstream.settings.role === 'partner') counters.failovers--;
  }

  /** Records an answer: resets the failure count, closes a half-open breaker. */
  onSuccess(upstream: Upstream, latencyMs: number): void {
    const entry = this.#health.get(upstream);
    if (entry !== undefined) entry.network.callSucceeded(entry.health, latencyMs);
  }

  /** Records a failure: may open the breaker. */
  onFailure(upstream: Upstream, failure: UpstreamFailure): void {
    const entry = this.#health.get(upstream);
    if (entry !== undefined) entry.network.callFailed(entry.health, failure);
  }

  /** Seconds until an open breaker of the network may let traffic through again (at least 1). */
  retryAfterSeconds(network: Network): number {
    const tracked = this.#networks.get(network);
    if (tracked === undefined) return 1;
    tracked.unavailable++;
    return tracked.retryAfterSeconds();
  }

  /** Why every call of `network` is refused now (every breaker open), or undefined when calls are routed. */
  refusal(network: Network): string | undefined {
    return (this.#networks.get(network) ?? this.#track(network)).refusal();
  }

  /**
   * Every upstream of every network, with `details`: `breaker` (state, consecutive failures, transitions,
   * how long ago it opened), `head`, `lag` and `lagging`, `latencyMs`, `weight`, `counters` (attempts,
   * retries, failovers, successes, failures, probes, probe failures), `floor` (the network's head floor,
   * shared by the deployment), `lastFailure`, `lastProbeOkMsAgo`,
   * `probing` and `networkUnavailable` (calls of the network no upstream could serve).
   */
  status(): UpstreamStatus[] {
    const now = performance.now();
    const out: UpstreamStatus[] = [];
    for (const network of this.#networks.values()) {
      const lastResort = network.servesLagging();
      for (const h of network.members) {
        const upstream = h.upstream;
        const breaker = h.breaker;
        const primary = upstream.role === 'primary';
        const openedAt = breaker.openedAt;
        out.push({
          name: upstream.name,
          network: network.network.name,
          role: upstream.role,
          healthy: breaker.state === 'closed' && !(primary && h.lagging && !lastResort),
          inFlight: upstream.inFlight,
          details: {
            breaker: {
              state: breaker.state,
              consecutiveFailures: breaker.consecutiveFailures,
              opened: breaker.transitions.opened,
              halfOpened: breaker.transitions.halfOpened,
              closed: breaker.transitions.closed,
              openedMsAgo: openedAt === undefined ? null : Math.round(now - openedAt),
            },
            head: h.head ?? null,
            highestHead: network.highestHead ?? null,
            floor: network.floor('') ?? null,
            lag: primary ? (h.lag ?? null) : null,
            lagging: primary && h.lagging,
            latencyMs: h.latencyMs === undefined ? null : Math.round(h.latencyMs * 100) / 100,
            weight: upstream.weight,
            counters: { ...h.counters },
            lastFailure: h.lastFailure === undefined ? null : { kind: h.lastFailure.kind, message: h.lastFailure.message, msAgo: Math.round(now - h.lastFailure.at) },
            bannedMethods: [...h.methodBans].filter(([, ban]) => ban.until > now).map(([method, ban]) => ({ method, msLeft: Math.round(ban.until - now) })),
            lastProbeOkMsAgo: h.lastProbeOkAt === undefined ? null : Math.round(now - h.lastProbeOkAt),
            probing: network.probing,
            networkUnavailable: network.unavailable,
          },
        });
      }
    }
    return out;
  }

  #track(network: Network): NetworkHealth {
    let tracked = this.#networks.get(network);
    if (tracked !== undefined) return tracked;
    tracked = new NetworkHealth(network, resolveFailoverSettings(this.#config, network.config), this.#logger);
    this.#networks.set(network, tracked);
    this.#byName.set(network.name, tracked);
    const health = tracked;
    tracked.onProbeHead = (head) => this.#raise(health, '', head);
    for (const health of tracked.members) this.#health.set(health.upstream, { network: tracked, health });
    return tracked;
  }
}
