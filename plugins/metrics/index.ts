/**
 * Observability plugins: `metrics()`, a Prometheus endpoint (prom-client) with calls, credits, errors
 * and latency by network, method and status plus upstream health; `accessLog()`, one structured pino line
 * per call that names a key by its id or a hash prefix, never by the key; and `gatewayLogger()`, a pino
 * logger that blanks credential fields.
 *
 * @packageDocumentation
 */
export { metrics, accessLog, METRICS_PLUGIN, ACCESS_LOG_PLUGIN, METRICS_TOKEN_ENV, type MetricsPlugin, type MetricsSettings, type AccessLogSettings } from './plugin.js';
export { PrometheusObserver, LATENCY_BUCKETS } from './prometheus-observer.js';
export { MetricsTransport } from './metrics-transport.js';
export { AccessLogObserver } from './access-log.js';
export { gatewayLogger, REDACTED_PATHS } from './logger.js';
export { groupMetrics, type MetricsJson } from './group-metrics.js';
