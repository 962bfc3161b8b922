/**
 * The OpenTelemetry plugin: traces of calls exported over OTLP/HTTP, off by default.
 *
 * @module
 */
import type { Tracer } from '@opentelemetry/api';
import type { BasicTracerProvider, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { otelApi, otelExporter, otelResources, otelSdk } from './peers.js';
import { AttemptObserverToken } from '../../core/upstream-api.js';
import { CORE_STAGES, Tokens, type TollgatePlugin } from '../../core/plugin-api.js';
import { CallTracer } from './call-tracer.js';
import { OTEL_PLUGIN, resolveOtelSettings, type OtelSettings, type ResolvedOtelSettings } from './settings.js';

/** Code-only options of {@link otel}, on top of the settings a config may hold. */
export interface OtelOptions extends OtelSettings {
  /**
   * Where spans go instead of OTLP/HTTP (an `InMemorySpanExporter` in tests, another protocol's
   * exporter). Spans handed to it one by one, as they end; OTLP export batches them.
   */
  readonly exporter?: SpanExporter;
}

/**
 * The OpenTelemetry plugin. With `enabled: true` (in the code or the config's `plugins.otel`), every
 * call gets a span (a child of the client's W3C `traceparent`, over HTTP or on a WebSocket's upgrade
 * request) with an event as each pipeline stage completes, and each upstream attempt a child span;
 * spans go to an OTLP/HTTP collector (`endpoint`), batched, and are flushed when the gateway stops.
 * Disabled, it registers nothing and costs nothing.
 *
 * @example
 * ```ts
 * createGateway({ config: { ...config, plugins: { otel: { enabled: true, endpoint: 'http://collector:4318/v1/traces' } } }, plugins: [..., otel()] });
 * ```
 */
export function otel(options: OtelOptions = {}): TollgatePlugin {
  const { exporter, ...code } = options;
  resolveOtelSettings([code]);
  let settings: ResolvedOtelSettings | undefined;
  let provider: BasicTracerProvider | undefined;
  // Calls only reach the pipeline once every plugin started; until then, and after stop, spans go nowhere.
  let tracer: Tracer = otelApi.trace.getTracerProvider().getTracer('tollgate');
  return {
    name: OTEL_PLUGIN,
    register(container, config) {
      settings = resolveOtelSettings([code, config.plugins[OTEL_PLUGIN]]);
      if (!settings.enabled) return;
      const calls = new CallTracer(() => tracer);
      for (const stage of calls.stages(CORE_STAGES)) container.register(Tokens.Stage, { useValue: stage });
      container.register(Tokens.CallObserver, { useValue: calls });
      container.register(AttemptObserverToken, { useValue: calls });
    },
    async start() {
      if (settings?.enabled !== true) return;
      const processor =
        exporter !== undefined
          ? new otelSdk.SimpleSpanProcessor(exporter)
          : new otelSdk.BatchSpanProcessor(new otelExporter.OTLPTraceExporter({ url: settings.endpoint, headers: { ...settings.headers } }));
      provider = new otelSdk.BasicTracerProvider({ resource: otelResources.resourceFromAttributes({ 'service.name': settings.serviceName }), spanProcessors: [processor] });
      tracer = provider.getTracer('tollgate');
    },
    async stop() {
      // Sends what is still batched; the provider is not used again.
      const stopping = provider;
      provider = undefined;
      await stopping?.shutdown();
    },
  };
}
