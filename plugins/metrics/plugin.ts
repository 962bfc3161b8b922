import { Tokens, validateSettings, type TollgatePlugin } from '../../core/plugin-api.js';
import { AttemptObserverToken } from '../../core/upstream-api.js';
import { PrometheusObserver } from './prometheus-observer.js';
import { MetricsTransport } from './metrics-transport.js';
import { AccessLogObserver } from './access-log.js';
import { joinGroupMetrics } from './group-metrics.js';
import { workerMembership } from '../workers/index.js';

/** The metrics plugin's name, and the key of its settings under `plugins` in the config. */
export const METRICS_PLUGIN = 'metrics';
/** The access-log plugin's name, and the key of its settings under `plugins` in the config. */
export const ACCESS_LOG_PLUGIN = 'access-log';
/** The environment variable a metrics token is read from when none is configured. */
export const METRICS_TOKEN_ENV = 'TOLLGATE_METRICS_TOKEN';

/** Settings of {@link metrics} (`plugins.metrics` in the config wins over them). */
export interface MetricsSettings {
  /** Path of the Prometheus endpoint (default `/metrics`). */
  readonly path?: string;
  /** A bearer token scrapers must send, at least 16 characters, not beginning with `change-me` (default: `TOLLGATE_METRICS_TOKEN`, else none: keep the endpoint on an internal network). */
  readonly token?: string;
  /** Also export Node's process metrics (default true). */
  readonly defaultMetrics?: boolean;
}

/** Settings of {@link accessLog} (`plugins.access-log` in the config wins over them). */
export interface AccessLogSettings {
  /** pino level of access lines (default `info`). */
  readonly level?: 'info' | 'debug' | 'trace';
}

/** The metrics plugin, with its observer once registered. */
export interface MetricsPlugin extends TollgatePlugin {
  /**
   * The observer holding the registry.
   *
   * @throws Error before the plugin was registered in a gateway.
   */
  readonly observer: PrometheusObserver;
}

/** The metrics plugin's settings schema: unknown or bad fields are refused by name, in the gateway's configuration format. */
const METRICS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    path: { type: 'string', pattern: '^/', default: '/metrics' },
    // The deployment kit's Secret ships placeholders: one left in place must not become the real token.
    token: {
      type: 'string',
      minLength: 16,
      not: { pattern: '^change-?me' },
      problem: { not: `is a placeholder (it begins with "change-me"): set ${METRICS_TOKEN_ENV} or plugins.${METRICS_PLUGIN}.token to a secret of your own` },
    },
    defaultMetrics: { type: 'boolean', default: true },
  },
} as const;

/** The access-log plugin's settings schema. */
const ACCESS_LOG_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: { level: { enum: ['info', 'debug', 'trace'], default: 'info' } },
} as const;

/**
 * Prometheus metrics ({@link PrometheusObserver}) at `GET /metrics`: calls, credits, errors and latency by
 * network, method and status; each upstream's attempt latency, failures and attempts in flight; and
 * upstream health read from the selector at scrape time.
 *
 * @example
 * ```ts
 * const gateway = await createGateway({ config, plugins: [metrics(), httpTransport(), evmFamily()] });
 * // curl http://127.0.0.1:8545/metrics
 * ```
 */
export function metrics(options: MetricsSettings = {}): MetricsPlugin {
  let observer: PrometheusObserver | undefined;
  return {
    name: METRICS_PLUGIN,
    get observer(): PrometheusObserver {
      if (observer === undefined) throw new Error('the metrics plugin is not registered in a gateway yet');
      return observer;
    },
    register(container, config) {
      // The environment's token is the fallback, checked as a configured one.
      const fromEnv = { token: process.env[METRICS_TOKEN_ENV] || undefined };
      const { path, token, defaultMetrics } = validateSettings<Required<Omit<MetricsSettings, 'token'>> & MetricsSettings>(METRICS_SCHEMA, [fromEnv, options, config.plugins[METRICS_PLUGIN]], `plugins.${METRICS_PLUGIN}`);
      observer = new PrometheusObserver({ clock: container.resolve(Tokens.Clock), selector: () => container.resolve(Tokens.UpstreamSelector), defaultMetrics });
      container.register(Tokens.CallObserver, { useValue: observer });
      container.register(AttemptObserverToken, { useValue: observer });
      // In a worker of a group, the endpoint serves the whole group's metrics, aggregated by the primary.
      const membership = workerMembership();
      const collect = membership === undefined ? undefined : joinGroupMetrics(membership, observer.registry);
      container.register(Tokens.Transport, { useValue: new MetricsTransport({ path, registry: observer.registry, token, collect }) });
    },
  };
}

/**
 * Structured access logs ({@link AccessLogObserver}): one line per call through the gateway's pino
 * logger, with the key's id or a hash prefix, never a key, secret or credential.
 *
 * @example
 * ```ts
 * const gateway = await createGateway({ config, plugins: [accessLog(), httpTransport(), evmFamily()] });
 * ```
 */
export function accessLog(options: AccessLogSettings = {}): TollgatePlugin {
  return {
    name: ACCESS_LOG_PLUGIN,
    register(container, config) {
      const { level } = validateSettings<Required<AccessLogSettings>>(ACCESS_LOG_SCHEMA, [options, config.plugins[ACCESS_LOG_PLUGIN]], `plugins.${ACCESS_LOG_PLUGIN}`);
      container.register(Tokens.CallObserver, { useValue: new AccessLogObserver(container.resolve(Tokens.Logger), container.resolve(Tokens.Clock), level) });
    },
  };
}
