import type { Logger } from 'pino';
import type { Network } from '../contracts/request-context.js';
import type { RequestContext } from '../contracts/request-context.js';
import { hasHealthCall, probeUpstream } from './probe.js';
import type { FailoverSettings } from './failover-settings.js';
import { UpstreamHealth } from './upstream-health.js';
import type { Upstream } from '../contracts/upstream.js';
import type { UpstreamFailure } from '../contracts/upstream-failure.js';

const EMPTY: readonly Upstream[] = Object.freeze([]);

/** How often a lagging primary's head is checked when the network's active probes are off (`probe.intervalMs: 0`), ms. */
const HEAD_CHECK_FALLBACK_MS = 2_000;

/**
 * The upstream orders of a network for the current health picture, computed once per change of it (a
 * breaker moving, a head moving) and shared by every call until the next change, so choosing upstreams
 * for a call allocates nothing.
 */
interface RoutePlan {
  /** Primaries at the head with a closed breaker: each call starts on one of them. */
  readonly lead: readonly UpstreamHealth[];
  /** For each lead (or a single entry when there is no lead): the primaries to try, in order. */
  readonly primaryOrders: readonly (readonly Upstream[])[];
  /** The same orders followed by the usable partners (or the partners alone when no primary is usable). */
  readonly failoverOrders: readonly (readonly Upstream[])[];
  /** Earliest end of an open breaker's cooldown, when calls (not probes) make the trials; else Infinity. */
  readonly wakeAt: number;
  /** Without probes: half-open primaries, each waiting for one call to be its trial. */
  readonly trials: readonly UpstreamHealth[];
  /**
   * Whether the primary orders hold lagging primaries: no primary is usable, so those whose breaker is
   * closed serve rather than the network being refused (their head answers still meet the floor).
   */
  readonly lastResort: boolean;
  /** For each trial: the trial upstream first, then the first primary order. */
  readonly trialPrimaryOrders: readonly (readonly Upstream[])[];
  /** The same, followed by the usable partners. */
  readonly trialFailoverOrders: readonly (readonly Upstream[])[];
}


/**
 * The health of one network's upstreams: breakers, heads and lag, the route plan derived from them, and
 * the active probes that keep them current.
 *
 * Routing rules, applied when the plan is rebuilt:
 * - a primary is **usable** when its breaker is closed and it is not lagging: its head is at most
 *   `maxLagBlocks` behind the highest head of the primaries with a closed breaker;
 * - calls start on a usable primary **at that highest head** (or whose head is unknown), the one with the
 *   fewest calls in flight per unit of weight, ties taken in turn; the other usable primaries follow, those
 *   at the head first, then the rest by head, highest first;
 * - when no primary is usable but some with a closed breaker are lagging, those serve as a last resort,
 *   highest head first: a lag measured against a floor another process raised is often this process's
 *   stale view of a node that is at the head (see {@link NetworkHealth.raiseFloor});
 * - partners (not held to the primaries' head: they are another provider's chain view, used only when no
 *   primary can serve) follow when the call is eligible;
 * - without active probes, an open breaker whose cooldown ended makes the next call its trial: that call
 *   tries the upstream first, and its outcome closes or reopens the breaker.
 */
export class NetworkHealth {
  /** The network. */
  readonly network: Network;
  /** Its failover settings. */
  readonly settings: FailoverSettings;
  /** Every upstream's health, primaries first. */
  readonly members: readonly UpstreamHealth[];
  /** Calls refused because no upstream could serve them. */
  unavailable = 0;
  /**
   * Highest head among primaries with a closed breaker, or the network's head floor when that is higher
   * (see {@link NetworkHealth.floor}).
   */
  highestHead: number | undefined;
  readonly #floors = new Map<string, number>();
  /** Told of every head a probe reports (the selector offers it to the deployment's shared heads). */
  onProbeHead: ((head: number) => void) | undefined;
  readonly #primaries: readonly UpstreamHealth[];
  readonly #partners: readonly UpstreamHealth[];
  readonly #logger: Logger | undefined;
  #plan: RoutePlan | undefined;
  #turn = 0;
  // Active probing.
  #interval: NodeJS.Timeout | undefined;
  readonly #trialTimers = new Set<NodeJS.Timeout>();
  #abort: AbortController | undefined;
  #inFlightProbes = new Set<Promise<void>>();
  // Head checks of lagging primaries when no active probes run.
  #headCheckTimer: NodeJS.Timeout | undefined;
  readonly #headCheckAbort = new AbortController();

  constructor(network: Network, settings: FailoverSettings, logger?: Logger) {
    this.network = network;
    this.settings = settings;
    this.#logger = logger;
    this.members = network.upstreams.map((u) => new UpstreamHealth(u, settings.breaker));
    this.#primaries = this.members.filter((h) => h.upstream.role === 'primary');
    this.#partners = this.members.filter((h) => h.upstream.role === 'partner');
  }

  /** Whether active probes run (they then make every breaker's half-open trial). */
  get probing(): boolean {
    return this.#interval !== undefined;
  }

  /**
   * The upstreams to try for call `ctx`, best first; `eligible` adds the partners. Without probes, a
   * half-open primary whose trial is free makes this call its trial: it comes first.
   */
  select(eligible: boolean, ctx: RequestContext): readonly Upstream[] {
    const plan = this.#currentPlan();
    if (plan.trials.length > 0) {
      const now = performance.now();
      for (let i = 0; i < plan.trials.length; i++) {
        const h = plan.trials[i]!;
        if (h.breaker.claimTrial(now, h.upstream.settings.timeoutMs)) {
          h.trialCall = ctx;
          return (eligible ? plan.trialFailoverOrders : plan.trialPrimaryOrders)[i]!;
        }
      }
    }
    const orders = eligible ? plan.failoverOrders : plan.primaryOrders;
    const lead = plan.lead;
    const n = lead.length;
    if (n < 2) return orders[0] ?? EMPTY;
    const start = this.#turn++ % n;
    let best = start;
    let bestScore = (lead[start]!.upstream.inFlight + 1) / lead[start]!.upstream.weight;
    for (let k = 1; k < n; k++) {
      const i = start + k < n ? start + k : start + k - n;
      const upstream = lead[i]!.upstream;
      const score = (upstream.inFlight + 1) / upstream.weight;
      if (score < bestScore) {
        best = i;
        bestScore = score;
      }
    }
    return orders[best]!;
  }

  /** Whether the route serves lagging primaries because no primary is usable (see {@link RoutePlan.lastResort}). */
  servesLagging(): boolean {
    return this.#currentPlan().lastResort;
  }

  /**
   * Why every call of the network is refused now, or undefined when some call could be routed: for
   * readiness, which must not say ready while the selector turns calls away.
   */
  refusal(): string | undefined {
    const plan = this.#currentPlan();
    if (plan.failoverOrders.length > 0 || plan.trials.length > 0) return undefined;
    const seconds = this.retryAfterSeconds();
    return this.members.length === 0 ? 'no upstream' : `no upstream may take calls: every breaker is open (the first may be tried again in ${seconds} s)`;
  }

  #currentPlan(): RoutePlan {
    const plan = this.#plan;
    return plan === undefined || (plan.wakeAt !== Infinity && performance.now() >= plan.wakeAt) ? this.#rebuild() : plan;
  }

  /** Forgets the plan: the next call rebuilds it from the current health. */
  invalidate(): void {
    this.#plan = undefined;
  }

  /** Seconds until an open breaker may let traffic through again (at least 1): the `Retry-After` of a 503. */
  retryAfterSeconds(): number {
    let soonest = Infinity;
    for (const h of this.members) soonest = Math.min(soonest, h.breaker.coolingUntil);
    if (soonest === Infinity) return 1;
    return Math.max(1, Math.ceil((soonest - performance.now()) / 1000));
  }

  /**
   * The floor of `scope` (`''`: the network's head): the highest head any upstream of the deployment has
   * shown there, as far as this instance has learned. Clients are never shown a head below it.
   */
  floor(scope: string): number | undefined {
    return this.#floors.get(scope);
  }

  /**
   * Raises the floor of `scope` to `head` when it is higher; returns whether it rose. The network's own
   * floor also counts as the highest head for lag: a primary further behind it than `maxLagBlocks` gets
   * no traffic while another primary is usable, whichever instance saw the head. Another instance's
   * floor may run ahead of what this one knows of its nodes (it was not chosen for a while): without
   * active probes, a primary this makes lagging has its head checked at once and then every probe
   * interval until it is back (see {@link NetworkHealth.checkLag}).
   */
  raiseFloor(scope: string, head: number): boolean {
    const current = this.#floors.get(scope);
    if (current !== undefined && current >= head) return false;
    this.#floors.set(scope, head);
    if (scope === '') {
      this.invalidate();
      this.checkLag();
    }
    return true;
  }

  /**
   * Takes a head an answer of `h` showed (its reading is as of now). Only raises the head: an answer
   * sent before a newer reading may arrive after it. Returns whether the head changed.
   */
  answerHead(h: UpstreamHealth, head: number): boolean {
    if (!h.noteHead(head, performance.now(), false)) return false;
    this.invalidate();
    this.checkLag();
    return true;
  }

  /**
   * Without active probes, nothing else would ever ask a lagging primary for its head (it gets calls
   * only as a last resort, and most answers show none): each lagging primary with a closed breaker is
   * asked with the family's probe now, and again every `probe.intervalMs` (2000 ms when probes are
   * off) while one lags. A head check moves no breaker: calls do that on a network without probes.
   */
  checkLag(): void {
    if (this.probing || this.#headCheckAbort.signal.aborted || !hasHealthCall(this.network)) return;
    this.updateLag();
    let lagging = false;
    for (const h of this.#primaries) {
      if (!h.lagging || h.breaker.state !== 'closed') continue;
      lagging = true;
      if (!h.probing) this.#checkHead(h);
    }
    if (!lagging || this.#headCheckTimer !== undefined) return;
    const interval = this.settings.probe.intervalMs > 0 ? this.settings.probe.intervalMs : HEAD_CHECK_FALLBACK_MS;
    this.#headCheckTimer = setTimeout(() => {
      this.#headCheckTimer = undefined;
      this.checkLag();
    }, interval);
    this.#headCheckTimer.unref();
  }

  #checkHead(h: UpstreamHealth): void {
    h.probing = true;
    h.counters.probes++;
    const sentAt = performance.now();
    const done = probeUpstream(this.network, h.upstream, { timeoutMs: this.settings.probe.timeoutMs, signal: this.#headCheckAbort.signal })
      .then((outcome) => {
        if (this.#headCheckAbort.signal.aborted) return;
        if (!outcome.ok) {
          h.counters.probeFailures++;
          h.lastFailure = { kind: 'probe', message: outcome.problem, at: performance.now() };
          return;
        }
        h.lastProbeOkAt = performance.now();
        h.observeLatency(outcome.latencyMs);
        if (outcome.head !== undefined) {
          if (h.noteHead(outcome.head, sentAt, true)) this.invalidate();
          this.onProbeHead?.(outcome.head);
        }
      })
      .finally(() => {
        h.probing = false;
        this.#inFlightProbes.delete(done);
      });
    this.#inFlightProbes.add(done);
  }

  /** Recomputes the highest head and every primary's lag. */
  updateLag(): void {
    let highest: number | undefined;
    for (const h of this.#primaries) {
      if (h.head !== undefined && h.breaker.state === 'closed' && (highest === undefined || h.head > highest)) highest = h.head;
    }
    const floor = this.#floors.get('');
    if (floor !== undefined && (highest === undefined || floor > highest)) highest = floor;
    this.highestHead = highest;
    for (const h of this.#primaries) {
      h.lag = highest === undefined || h.head === undefined ? undefined : Math.max(0, highest - h.head);
      h.lagging = h.lag !== undefined && h.lag > this.settings.maxLagBlocks;
    }
  }

  /** Records a breaker transition: logs it, and for an opening, plans the trial probe. */
  breakerMoved(h: UpstreamHealth, reason: string): void {
    this.invalidate();
    const state = h.breaker.state;
    const fields = { network: this.network.name, upstream: h.upstream.name, breaker: state, reason };
    if (state === 'open') {
      this.#logger?.warn(fields, 'upstream breaker opened');
      this.#scheduleTrial(h);
    } else {
      this.#logger?.info(fields, `upstream breaker ${state === 'closed' ? 'closed' : 'half-open'}`);
    }
  }

  /** Records a failed attempt of a call. */
  callFailed(h: UpstreamHealth, failure: UpstreamFailure): void {
    const now = performance.now();
    h.counters.failures++;
    h.lastFailure = { kind: failure.kind, message: failure.message, at: now };
    if (h.breaker.failure(now)) this.breakerMoved(h, failure.message);
  }

  /** Records an answered attempt of a call. */
  callSucceeded(h: UpstreamHealth, latencyMs: number): void {
    h.counters.successes++;
    h.observeLatency(latencyMs);
    if (h.breaker.success()) this.breakerMoved(h, 'a call was answered');
  }

  #rebuild(): RoutePlan {
    const now = performance.now();
    const probing = this.probing;
    if (!probing) {
      for (const h of this.members) if (h.breaker.wake(now)) this.breakerMoved(h, 'cooldown over: the next call is the trial');
    }
    this.updateLag();
    const highest = this.highestHead;
    const lead: UpstreamHealth[] = [];
    const behind: UpstreamHealth[] = [];
    const trials: UpstreamHealth[] = [];
    const laggards: UpstreamHealth[] = [];
    for (const h of this.#primaries) {
      const state = h.breaker.state;
      if (state === 'closed') {
        if (h.lagging) {
          laggards.push(h);
          continue;
        }
        if (h.head === undefined || highest === undefined || h.head >= highest) lead.push(h);
        else behind.push(h);
      } else if (state === 'half-open' && !probing) {
        trials.push(h);
      }
    }
    behind.sort((a, b) => b.head! - a.head!);
    const lastResort = lead.length === 0 && behind.length === 0 && laggards.length > 0;
    // Lagging primaries close every order: a call whose usable nodes all failed (the node at the head
    // killed, say) asks them rather than end unanswered; `admit` lets them take only such a call.
    behind.push(...laggards.sort((a, b) => b.head! - a.head!));
    const partners: Upstream[] = [];
    for (const h of this.#partners) if (h.breaker.state === 'closed') partners.push(h.upstream);
    if (!probing) for (const h of this.#partners) if (h.breaker.state === 'half-open') partners.push(h.upstream);

    const tail = behind.map((h) => h.upstream);
    const primaryOrders: Upstream[][] = [];
    if (lead.length === 0) {
      if (tail.length > 0) primaryOrders.push(tail);
    } else {
      for (let i = 0; i < lead.length; i++) {
        const order: Upstream[] = [];
        for (let k = 0; k < lead.length; k++) order.push(lead[(i + k) % lead.length]!.upstream);
        primaryOrders.push([...order, ...tail]);
      }
    }
    const failoverOrders = primaryOrders.length === 0
      ? (partners.length === 0 ? [] : [partners])
      : primaryOrders.map((order) => [...order, ...partners]);
    let wakeAt = Infinity;
    if (!probing) for (const h of this.members) wakeAt = Math.min(wakeAt, h.breaker.coolingUntil);
    const trialPrimaryOrders = trials.map((h) => Object.freeze([h.upstream, ...(primaryOrders[0] ?? [])]));
    const plan: RoutePlan = {
      lead,
      primaryOrders: primaryOrders.map((o) => Object.freeze(o)),
      failoverOrders: failoverOrders.map((o) => Object.freeze(o)),
      wakeAt,
      lastResort,
      trials,
      trialPrimaryOrders,
      trialFailoverOrders: trialPrimaryOrders.map((o) => Object.freeze([...o, ...partners])),
    };
    this.#plan = plan;
    return plan;
  }

  // ---- Active probes ------------------------------------------------------------------------------

  /**
   * Starts probing every upstream with the family's probe ({@link probeUpstream}) every `probe.intervalMs`,
   * when the network is JSON-RPC, has a probe, two or more upstreams, and the interval is not 0. Returns
   * whether it started.
   */
  startProbing(): boolean {
    if (this.#interval !== undefined) return true;
    const interval = this.settings.probe.intervalMs;
    if (!hasHealthCall(this.network) || interval <= 0 || this.members.length < 2) return false;
    this.#abort = new AbortController();
    this.#interval = setInterval(() => this.#tick(), interval);
    this.#interval.unref();
    this.invalidate();
    this.#tick();
    return true;
  }

  /** Stops probing and head checks, and waits for probes in flight (they are aborted). */
  async stopProbing(): Promise<void> {
    if (this.#interval !== undefined) clearInterval(this.#interval);
    this.#interval = undefined;
    clearTimeout(this.#headCheckTimer);
    this.#headCheckTimer = undefined;
    this.#headCheckAbort.abort();
    for (const timer of this.#trialTimers) clearTimeout(timer);
    this.#trialTimers.clear();
    this.#abort?.abort();
    await Promise.allSettled([...this.#inFlightProbes]);
    this.invalidate();
  }

  #tick(): void {
    const now = performance.now();
    for (const h of this.members) {
      if (h.probing) continue;
      const breaker = h.breaker;
      if (breaker.state === 'open') {
        if (!breaker.wake(now)) continue;
        this.breakerMoved(h, 'cooldown over: probing');
      }
      if (breaker.state === 'half-open' && !breaker.claimTrial(now, this.settings.probe.timeoutMs)) continue;
      this.#probe(h);
    }
  }

  /** Whether a primary other than `h` is usable (closed breaker, not lagging). */
  #usableBesides(h: UpstreamHealth): boolean {
    for (const other of this.#primaries) if (other !== h && other.breaker.state === 'closed' && !other.lagging) return true;
    return false;
  }

  #scheduleTrial(h: UpstreamHealth): void {
    if (this.#interval === undefined) return;
    const delay = Math.max(1, Math.ceil(h.breaker.coolingUntil - performance.now()) + 1);
    const timer = setTimeout(() => {
      this.#trialTimers.delete(timer);
      if (this.#interval === undefined || h.probing) return;
      const now = performance.now();
      if (h.breaker.state === 'open') {
        if (!h.breaker.wake(now)) return this.#scheduleTrial(h);
        this.breakerMoved(h, 'cooldown over: probing');
      }
      if (h.breaker.state === 'half-open' && h.breaker.claimTrial(now, this.settings.probe.timeoutMs)) this.#probe(h);
    }, delay);
    timer.unref();
    this.#trialTimers.add(timer);
  }

  #probe(h: UpstreamHealth): void {
    h.probing = true;
    h.counters.probes++;
    const done = this.#runProbe(h).finally(() => {
      h.probing = false;
      this.#inFlightProbes.delete(done);
    });
    this.#inFlightProbes.add(done);
  }

  async #runProbe(h: UpstreamHealth): Promise<void> {
    const sentAt = performance.now();
    const outcome = await probeUpstream(this.network, h.upstream, { timeoutMs: this.settings.probe.timeoutMs, signal: this.#abort!.signal });
    if (this.#interval === undefined) return; // stopped meanwhile
    const now = performance.now();
    if (!outcome.ok) {
      h.counters.probeFailures++;
      h.lastFailure = { kind: 'probe', message: outcome.problem, at: now };
      if (h.breaker.failure(now)) this.breakerMoved(h, outcome.problem);
      return;
    }
    const head = outcome.head;
    h.lastProbeOkAt = now;
    h.observeLatency(outcome.latencyMs);
    if (head !== undefined && h.noteHead(head, sentAt, true)) this.invalidate();
    if (head !== undefined) this.onProbeHead?.(head);
    if (h.upstream.role === 'primary') {
      const wasLagging = h.lagging;
      this.updateLag();
      if (h.lagging !== wasLagging) this.invalidate();
      // Lag counts against the breaker only while another primary can serve: when every primary lags
      // (behind a floor another process raised), they serve as a last resort and must stay closed.
      if (h.lagging && this.#usableBesides(h)) {
        const message = `head ${h.head} is ${h.lag} blocks behind ${this.highestHead} (limit ${this.settings.maxLagBlocks})`;
        h.counters.probeFailures++;
        h.lastFailure = { kind: 'lagging', message, at: now };
        if (h.breaker.failure(now)) this.breakerMoved(h, message);
        return;
      }
    }
    if (h.breaker.success()) this.breakerMoved(h, 'a probe was answered');
  }
}
