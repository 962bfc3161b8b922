import { importPeer } from '../../core/plugin-api.js';

// This plugin's drivers are optional peer dependencies of tollgate: an application installs those of the
// plugins it loads. Loading them here, with top-level await, turns a missing one into an error that names
// the package when the plugin is imported (a static import would fail at link time with Node's message).

/** The `@opentelemetry/api` package. */
export const otelApi: typeof import('@opentelemetry/api') = await importPeer('@opentelemetry/api', () => import('@opentelemetry/api'), 'tollgate/plugins/otel');
/** The `@opentelemetry/core` package. */
export const otelCore: typeof import('@opentelemetry/core') = await importPeer('@opentelemetry/core', () => import('@opentelemetry/core'), 'tollgate/plugins/otel');
/** The `@opentelemetry/sdk-trace-base` package. */
export const otelSdk: typeof import('@opentelemetry/sdk-trace-base') = await importPeer('@opentelemetry/sdk-trace-base', () => import('@opentelemetry/sdk-trace-base'), 'tollgate/plugins/otel');
/** The `@opentelemetry/exporter-trace-otlp-http` package. */
export const otelExporter: typeof import('@opentelemetry/exporter-trace-otlp-http') = await importPeer('@opentelemetry/exporter-trace-otlp-http', () => import('@opentelemetry/exporter-trace-otlp-http'), 'tollgate/plugins/otel');
/** The `@opentelemetry/resources` package. */
export const otelResources: typeof import('@opentelemetry/resources') = await importPeer('@opentelemetry/resources', () => import('@opentelemetry/resources'), 'tollgate/plugins/otel');
