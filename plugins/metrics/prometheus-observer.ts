import type { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { promClient } from './peers.js';
import type { CallObserver, Clock, RequestContext } from '../../core/plugin-api.js';
import type { AttemptEnd, AttemptObserver, Upstream, UpstreamSelector } from '../../core/upstream-api.js';
import { chargedCredits, methodLabel, statusLabel } from './call-labels.js';

/** Latency buckets, in seconds: from a cached answer on the loopback to a slow `eth_getLogs`. */
export const LATENCY_BUCKETS: readonly number[] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * The gateway's Prometheus metrics, in a registry of their own:
 * - `tollgate_calls_total{network,method,status}`: calls, `status` being `ok` or the error's catalog name;
 * - `tollgate_credits_total{network,method}`: credits charged (refunded calls count nothing);
 * - `tollgate_errors_total{network,method,error}`: calls that ended in a gateway error;
 * - `tollgate_call_duration_seconds{network,method,status}`: time in the gateway (millisecond resolution);
 * - `tollgate_cache_calls_total{network,method,result}`: calls a response cache considered, `result` being
 *   `hit` or `miss`, and `tollgate_cache_hit_ratio{network,method}`: hits over both, since start;
 * - `tollgate_upstream_healthy{network,upstream,role}` and `tollgate_upstream_in_flight{...}`: read from the
 *   upstream selector's status at scrape time;
 * - `tollgate_upstream_attempt_duration_seconds{network,upstream,outcome}`: each attempt at an upstream,
 *   from the request leaving to the answer or failure, `outcome` being `ok` or the failure's kind
 *   (`connect`, `timeout`, `reset`, `status`, `overloaded`, `bad-response`, `unsupported`);
 *   `tollgate_upstream_attempt_errors_total{network,upstream,kind}`: the failed ones; and
 *   `tollgate_upstream_attempts_in_flight{network,upstream}`: those not ended yet. Upstreams are named by
 *   their configured name, never by URL (a URL may hold a provider's credential);
 * - with `defaultMetrics`, Node's process metrics (`process_*`, `nodejs_*`).
 */
export class PrometheusObserver implements CallObserver, AttemptObserver {
  /** The registry to expose. */
  readonly registry = new promClient.Registry();
  readonly #clock: Clock;
  readonly #calls: Counter<'network' | 'method' | 'status'>;
  readonly #credits: Counter<'network' | 'method'>;
  readonly #errors: Counter<'network' | 'method' | 'error'>;
  readonly #duration: Histogram<'network' | 'method' | 'status'>;
  readonly #cache: Counter<'network' | 'method' | 'result'>;
  readonly #attemptDuration: Histogram<'network' | 'upstream' | 'outcome'>;
  readonly #attemptErrors: Counter<'network' | 'upstream' | 'kind'>;
  readonly #attemptsInFlight: Gauge<'network' | 'upstream'>;
  /** Hits and misses per `network|method`, for the ratio gauge. */
  readonly #cacheTotals = new Map<string, { network: string; method: string; hits: number; misses: number }>();

  constructor(options: { clock: Clock; selector: () => UpstreamSelector; defaultMetrics: boolean }) {
    this.#clock = options.clock;
    const registers = [this.registry];
    this.#calls = new promClient.Counter({ name: 'tollgate_calls_total', help: 'Calls by network, method and outcome (ok or the error name).', labelNames: ['network', 'method', 'status'], registers });
    this.#credits = new promClient.Counter({ name: 'tollgate_credits_total', help: 'Credits charged by network and method.', labelNames: ['network', 'method'], registers });
    this.#errors = new promClient.Counter({ name: 'tollgate_errors_total', help: 'Calls that ended in a gateway error, by network, method and error name.', labelNames: ['network', 'method', 'error'], registers });
    this.#duration = new promClient.Histogram({
      name: 'tollgate_call_duration_seconds',
      help: 'Time a call spent in the gateway, by network, method and outcome.',
      labelNames: ['network', 'method', 'status'],
      buckets: [...LATENCY_BUCKETS],
      registers,
    });
    this.#cache = new promClient.Counter({ name: 'tollgate_cache_calls_total', help: 'Calls a response cache considered, by network, method and result (hit or miss).', labelNames: ['network', 'method', 'result'], registers });
    const cacheTotals = this.#cacheTotals;
    new promClient.Gauge({
      name: 'tollgate_cache_hit_ratio',
      help: 'Share of the calls a response cache considered that it answered, by network and method, since start.',
      labelNames: ['network', 'method'],
      registers,
      collect() {
        this.reset();
        for (const { network, method, hits, misses } of cacheTotals.values()) this.set({ network, method }, hits / (hits + misses));
      },
    });
    const upstreamLabels = ['network', 'upstream', 'role'] as const;
    const inFlight = new promClient.Gauge({ name: 'tollgate_upstream_in_flight', help: 'Calls waiting on each upstream.', labelNames: upstreamLabels, registers: [] });
    new promClient.Gauge({
      name: 'tollgate_upstream_healthy',
      help: 'Whether the selector sends traffic to each upstream (1) or not (0).',
      labelNames: upstreamLabels,
      registers,
      collect() {
        this.reset();
        inFlight.reset();
        for (const status of options.selector().status?.() ?? []) {
          const labels = { network: status.network, upstream: status.name, role: status.role };
          this.set(labels, status.healthy ? 1 : 0);
          inFlight.set(labels, status.inFlight);
        }
      },
    });
    this.registry.registerMetric(inFlight);
    this.#attemptDuration = new promClient.Histogram({
      name: 'tollgate_upstream_attempt_duration_seconds',
      help: 'Time of each attempt at an upstream, from the request leaving to its answer or failure, by network, upstream and outcome (ok or the failure kind).',
      labelNames: ['network', 'upstream', 'outcome'],
      buckets: [...LATENCY_BUCKETS],
      registers,
    });
    this.#attemptErrors = new promClient.Counter({ name: 'tollgate_upstream_attempt_errors_total', help: 'Attempts at an upstream that failed, by network, upstream and failure kind.', labelNames: ['network', 'upstream', 'kind'], registers });
    this.#attemptsInFlight = new promClient.Gauge({ name: 'tollgate_upstream_attempts_in_flight', help: 'Attempts at each upstream that have not ended yet.', labelNames: ['network', 'upstream'], registers });
    if (options.defaultMetrics) promClient.collectDefaultMetrics({ register: this.registry });
  }

  callFinished(ctx: RequestContext): void {
    const network = ctx.network.name;
    const method = methodLabel(ctx);
    const status = statusLabel(ctx);
    this.#calls.inc({ network, method, status });
    const credits = chargedCredits(ctx);
    if (credits > 0) this.#credits.inc({ network, method }, credits);
    if (ctx.error !== undefined) this.#errors.inc({ network, method, error: status });
    this.#duration.observe({ network, method, status }, Math.max(0, this.#clock.now() - ctx.startedAt) / 1000);
    if (ctx.cache !== undefined) this.#cacheResult(network, method, ctx.cache);
  }

  /** Counts an attempt at `upstream` in flight, and its duration and outcome once it ends. */
  attemptStarted(ctx: RequestContext, upstream: Upstream): AttemptEnd {
    const labels = { network: ctx.network.name, upstream: upstream.name };
    const startedAt = performance.now();
    this.#attemptsInFlight.inc(labels);
    return (failure) => {
      this.#attemptsInFlight.dec(labels);
      const outcome = failure === undefined ? 'ok' : failure.kind;
      this.#attemptDuration.observe({ ...labels, outcome }, (performance.now() - startedAt) / 1000);
      if (failure !== undefined) this.#attemptErrors.inc({ ...labels, kind: failure.kind });
    };
  }

  #cacheResult(network: string, method: string, result: 'hit' | 'miss'): void {
    this.#cache.inc({ network, method, result });
    const slot = `${network}|${method}`;
    let totals = this.#cacheTotals.get(slot);
    if (totals === undefined) this.#cacheTotals.set(slot, (totals = { network, method, hits: 0, misses: 0 }));
    if (result === 'hit') totals.hits++;
    else totals.misses++;
  }
}
