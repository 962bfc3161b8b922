/**
 * Settings of the OpenTelemetry plugin: what they look like and how they are checked.
 *
 * @module
 */
import { validateSettingsLayers } from '../../core/plugin-api.js';

/** The plugin's name, and the key of its settings under `plugins` in the config. */
export const OTEL_PLUGIN = 'otel';

/** The OTLP/HTTP endpoint traces go to when none is set: a collector on this machine. */
export const DEFAULT_OTLP_ENDPOINT = 'http://127.0.0.1:4318/v1/traces';

/** The plugin's settings, as the config's `plugins.otel` holds them (all optional). */
export interface OtelSettings {
  /** Turns tracing on (default false: the plugin registers nothing). */
  readonly enabled?: boolean;
  /** `service.name` of the spans (default `tollgate`). */
  readonly serviceName?: string;
  /** OTLP/HTTP traces endpoint (default `DEFAULT_OTLP_ENDPOINT`). */
  readonly endpoint?: string;
  /** Headers sent with each export (a collector's API key, for instance). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** Settings with defaults applied. */
export interface ResolvedOtelSettings {
  /** See {@link OtelSettings.enabled}. */
  readonly enabled: boolean;
  /** See {@link OtelSettings.serviceName}. */
  readonly serviceName: string;
  /** See {@link OtelSettings.endpoint}. */
  readonly endpoint: string;
  /** See {@link OtelSettings.headers}. */
  readonly headers: Readonly<Record<string, string>>;
}

/** One layer of settings (the code's or the config's), checked on its own so each problem names its layer. */
const LAYER_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    enabled: { type: 'boolean' },
    serviceName: { type: 'string', minLength: 1 },
    endpoint: { type: 'string', pattern: '^https?://\\S+$' },
    headers: { type: 'object', additionalProperties: { type: 'string' } },
  },
} as const;

/**
 * Checks the code's and the config's settings through core's validator and combines them (the config's
 * fields win).
 *
 * @throws ConfigError naming every problem (`otel().enabled: must be boolean`, `plugins.otel.colour: is not a known field`).
 */
export function resolveOtelSettings(layers: ReadonlyArray<object | undefined>): ResolvedOtelSettings {
  const merged = validateSettingsLayers<OtelSettings>(LAYER_SCHEMA, layers.map((layer, i) => [i === 0 ? 'otel()' : `plugins.${OTEL_PLUGIN}`, layer] as const));
  return {
    enabled: merged.enabled ?? false,
    serviceName: merged.serviceName ?? 'tollgate',
    endpoint: merged.endpoint ?? DEFAULT_OTLP_ENDPOINT,
    headers: merged.headers ?? {},
  };
}
