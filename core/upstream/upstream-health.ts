import { CircuitBreaker, type CircuitBreakerSettings } from './circuit-breaker.js';
import type { Upstream } from '../contracts/upstream.js';
import type { FailureKind } from '../contracts/upstream-failure.js';

/** Counters of one upstream, since the gateway started. */
export interface UpstreamCounters {
  /** Calls sent to it (first attempts and retries). */
  attempts: number;
  /** Of those, retries: the call had failed on another upstream first. */
  retries: number;
  /** Of those, failovers: calls sent to it as a partner because no primary could serve. */
  failovers: number;
  /** Attempts it answered. */
  successes: number;
  /** Attempts it failed (connect error, timeout, reset, HTTP 5xx or 429, capacity error...). */
  failures: number;
  /** Active probes sent. */
  probes: number;
  /** Probes that failed (no answer, an error, or a head too far behind). */
  probeFailures: number;
}

/** The last failure an upstream had. */
export interface LastFailure {
  /** What kind. */
  readonly kind: FailureKind | 'probe' | 'lagging';
  /** What happened. */
  readonly message: string;
  /** When, monotonic ms. */
  readonly at: number;
}

/** Weight of a new latency sample in the moving average. */
const LATENCY_ALPHA = 0.2;

/**
 * What the failover selector knows of one upstream: its breaker, its last known head, its latency and its
 * counters. Plain data, updated in place on the hot path.
 */
export class UpstreamHealth {
  /** The upstream. */
  readonly upstream: Upstream;
  /** Its circuit breaker. */
  readonly breaker: CircuitBreaker;
  /** Counters. */
  readonly counters: UpstreamCounters = { attempts: 0, retries: 0, failovers: 0, successes: 0, failures: 0, probes: 0, probeFailures: 0 };
  /** Last head reported by a probe or shown by an answer (block number or slot); undefined until one reported a number. */
  head: number | undefined;
  /** When {@link head} was read, monotonic ms: a probe's send time, or an answer's arrival. */
  headReadAt = Number.NEGATIVE_INFINITY;
  /** Moving average of answer latency (calls and probes), ms. */
  latencyMs: number | undefined;
  /** Blocks behind the highest head of the live primaries (primaries with a known head only). */
  lag: number | undefined;
  /** Whether {@link lag} is over the network's limit. */
  lagging = false;
  /** The last failure. */
  lastFailure: LastFailure | undefined;
  /** When the last probe answered well, monotonic ms. */
  lastProbeOkAt: number | undefined;
  /** Methods it answered "method not found" for: skipped for them until `until` (monotonic ms), with the node's words. */
  readonly methodBans = new Map<string, { readonly until: number; readonly message: string }>();
  /** Whether a probe is in flight. */
  probing = false;
  /** Without probes: the call that holds the half-open trial. */
  trialCall: object | undefined;

  constructor(upstream: Upstream, breaker: CircuitBreakerSettings) {
    this.upstream = upstream;
    this.breaker = new CircuitBreaker(breaker);
  }

  /**
   * Takes a head reading made at `readAt` (monotonic ms); returns whether the head changed. Readings
   * arrive out of order (a probe sent before a burst of blocks answers after a call that saw the
   * burst): a reading lower than the known head counts only when it was made after that head was read,
   * and only probes may lower a head (`lower`), as only they know when they read it.
   */
  noteHead(head: number, readAt: number, lower: boolean): boolean {
    const known = this.head;
    if (known !== undefined && head < known && (!lower || readAt < this.headReadAt)) return false;
    if (readAt > this.headReadAt) this.headReadAt = readAt;
    if (head === known) return false;
    this.head = head;
    return true;
  }

  /** Adds a latency sample. */
  observeLatency(ms: number): void {
    this.latencyMs = this.latencyMs === undefined ? ms : this.latencyMs + LATENCY_ALPHA * (ms - this.latencyMs);
  }
}
