import type { MetricObjectWithValues, MetricValue, Registry } from 'prom-client';
import type { WorkerGroup, WorkerMembership } from '../workers/index.js';
import { promClient } from './peers.js';

/** A registry's metrics as prom-client's `getMetricsAsJSON()` gives them, the form the primary aggregates. */
export type MetricsJson = MetricObjectWithValues<MetricValue<string>>[];

/**
 * Metrics whose figure belongs to one worker and is kept per worker (`worker` label) rather than summed:
 * Node's process metrics, what a worker's upstream selector believes of each upstream, and the cache
 * hit ratio (a ratio does not add up). Everything else (calls, credits, errors, latency, and the
 * attempts at upstreams each worker made: `tollgate_upstream_attempt*`) is summed.
 */
export function isPerWorkerMetric(name: string): boolean {
  return /^(process_|nodejs_|tollgate_upstream_(?!attempt)|tollgate_cache_hit_ratio)/.test(name);
}

/**
 * A worker's metrics for the primary: `registry` (the gateway's) with per-worker metrics labelled
 * `worker`, and `shared` (prom-client's default registry, where store plugins export their connection
 * state) labelled `worker` whole.
 */
export async function workerMetricsJson(registry: Registry, shared: Registry, worker: number): Promise<MetricsJson[]> {
  const label = (metric: MetricsJson[number]): MetricsJson[number] => ({
    ...metric,
    // Each worker's values are distinct by their label: summing them changes nothing, and nothing is dropped.
    aggregator: 'sum',
    values: metric.values.map((value) => ({ ...value, labels: { ...value.labels, worker: String(worker) } })),
  });
  const [own, common] = await Promise.all([registry.getMetricsAsJSON(), shared.getMetricsAsJSON()]);
  return [
    (own as MetricsJson).map((metric) => (isPerWorkerMetric(metric.name) ? label(metric) : metric)),
    (common as MetricsJson).map(label),
  ];
}

/**
 * The primary's answer to a worker's `metrics` question, for `superviseWorkers`'s `answers`: asks
 * every worker for its metrics, aggregates them with prom-client's `AggregatorRegistry.aggregate`, adds
 * the group's own (`tollgate_workers` serving and configured, `tollgate_worker_restarts_total`), and
 * returns the Prometheus text. A worker that does not answer within 2 s is left out of that scrape.
 *
 * @example
 * ```ts
 * superviseWorkers({ workers: 2, data, logger, answers: { metrics: groupMetrics() } });
 * ```
 */
export function groupMetrics(): (payload: unknown, group: WorkerGroup) => Promise<string> {
  const registry = new promClient.Registry();
  let current: WorkerGroup | undefined;
  new promClient.Gauge({
    name: 'tollgate_workers',
    help: 'Worker processes of this gateway, by state (configured, serving).',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const state = current?.state();
      if (state === undefined) return;
      this.set({ state: 'configured' }, state.workers);
      this.set({ state: 'serving' }, state.serving);
    },
  });
  new promClient.Counter({
    name: 'tollgate_worker_restarts_total',
    help: 'Workers replaced after they died.',
    registers: [registry],
    collect() {
      const restarts = current?.state().restarts ?? 0;
      this.reset();
      this.inc(restarts);
    },
  });
  return async (_payload, group) => {
    current = group;
    const answers = (await group.askWorkers('metrics-json', undefined, 2_000)) as MetricsJson[][];
    const own = (await registry.getMetricsAsJSON()) as MetricsJson;
    return promClient.AggregatorRegistry.aggregate([own, ...answers.flat()]).metrics();
  };
}

/**
 * Joins a worker's metrics to its group: answers the primary's `metrics-json` question with this
 * worker's registries, and returns the collector the metrics endpoint uses (the whole group's text,
 * aggregated by the primary).
 */
export function joinGroupMetrics(membership: WorkerMembership, registry: Registry): () => Promise<string> {
  membership.answer('metrics-json', () => workerMetricsJson(registry, promClient.register, membership.worker));
  return async () => String(await membership.askPrimary('metrics', undefined, 5_000));
}
