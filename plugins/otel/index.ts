/**
 * The OpenTelemetry plugin: a span per call (a child of the client's W3C `traceparent`) with an event
 * per pipeline stage, a span per upstream attempt, exported over OTLP/HTTP. Off by default.
 *
 * @packageDocumentation
 */
export { otel, type OtelOptions } from './plugin.js';
export { CallTracer, CALL_SPAN, OPEN_SPAN_STAGE } from './call-tracer.js';
export { OTEL_PLUGIN, type OtelSettings, type ResolvedOtelSettings } from './settings.js';
