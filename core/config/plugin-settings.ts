import type { ValidateFunction } from 'ajv';
import { ConfigError } from './load-config.js';
import { createSchemaValidator, schemaProblems } from './schema-problems.js';

/**
 * The JSON Schema of a plugin's settings (draft-07, as the gateway's own configuration schema). Besides
 * the standard keywords, a schema may carry a `problem` annotation: what to say when a value fails it
 * (`problem: 'must be an origin such as https://app.example.com'`), or, as an object, per keyword
 * (`problem: { not: 'requireSecret and a required jwt cannot both be on' }`).
 */
export type SettingsSchema = Readonly<Record<string, unknown>>;

/**
 * What a schema cannot say (values unique by one of their fields, say), checked once the settings
 * passed the schema: each problem as `path: what is wrong`, the path relative to the settings
 * (`jwt.keys[1].kid: "a" is used twice`), or `: what is wrong` for the settings as a whole.
 */
export type SettingsRefinement<T> = (settings: T) => readonly string[];

// Settings are validated as the gateway's configuration is (defaults filled in); checks report only.
const filling = createSchemaValidator(true);
const checking = createSchemaValidator(false);
const compiledFilling = new WeakMap<SettingsSchema, ValidateFunction>();
const compiledChecking = new WeakMap<SettingsSchema, ValidateFunction>();

function compiled(schema: SettingsSchema, fill: boolean): ValidateFunction {
  const cache = fill ? compiledFilling : compiledChecking;
  let validate = cache.get(schema);
  if (validate === undefined) {
    validate = (fill ? filling : checking).compile(schema);
    cache.set(schema, validate);
  }
  return validate;
}

function refined<T>(refine: SettingsRefinement<T> | undefined, settings: T, where: string): string[] {
  if (refine === undefined) return [];
  return refine(settings).map((line) => (line.startsWith(':') || line.startsWith('[') || where === '' ? `${where}${line}` : `${where}.${line}`));
}

/**
 * Validates a plugin's settings with the gateway's own validator and error format: `sources` (the
 * plugin function's options, then the config's `plugins.<name>`, say) are merged in order, a later
 * defined value winning, then checked against `schema`, whose defaults fill what none gave, then by
 * `refine` when given.
 *
 * @param where The settings' place in the config, prefixed to each problem (`plugins.health`).
 * @throws ConfigError naming each offending field (`plugins.health.timeoutMs: must be >= 1`).
 * @example
 * ```ts
 * const schema = {
 *   type: 'object',
 *   additionalProperties: false,
 *   properties: { path: { type: 'string', pattern: '^/', default: '/status', problem: 'must be a path (starting with /)' } },
 * } as const;
 * const settings = validateSettings<{ path: string }>(schema, [options, config.plugins['status']], 'plugins.status');
 * ```
 */
export function validateSettings<T>(schema: SettingsSchema, sources: ReadonlyArray<object | undefined>, where: string, refine?: SettingsRefinement<T>): T {
  const validate = compiled(schema, true);
  const merged: Record<string, unknown> = {};
  for (const source of sources) {
    for (const [name, value] of Object.entries(source ?? {})) if (value !== undefined) merged[name] = value;
  }
  if (!validate(merged)) throw new ConfigError(schemaProblems(validate.errors ?? [], where));
  const problems = refined(refine, merged as T, where);
  if (problems.length > 0) throw new ConfigError(problems);
  return merged as T;
}

/**
 * The problems of `value` against `schema` (then `refine`), worded as {@link validateSettings} words
 * them; empty when it is fine. Reports without throwing and without filling defaults: for a check that
 * collects problems from several places, or runs before a value is stored (a key's settings section).
 *
 * @example
 * ```ts
 * const problems = settingsProblems(schema, request.body, 'settings.status');
 * if (problems.length > 0) return refuse(problems);
 * ```
 */
export function settingsProblems<T = unknown>(schema: SettingsSchema, value: unknown, where: string, refine?: SettingsRefinement<T>): string[] {
  const validate = compiled(schema, false);
  if (!validate(value)) return schemaProblems(validate.errors ?? [], where);
  return refined(refine, value as T, where);
}

/** One layer of a plugin's settings and where it comes from: `['otel()', options]`, `['plugins.otel', section]`. */
export type SettingsLayer = readonly [where: string, settings: object | undefined];

/**
 * Validates settings given in layers (the plugin function's options, then the config's section): each
 * layer on its own against `schema`, so each problem names the layer it is in, with every layer's
 * problems at once; then the layers merged as {@link validateSettings} merges them (a later defined
 * value winning, the schema's defaults filling the rest, `refine` on the result, its problems named
 * after the last layer).
 *
 * @throws ConfigError naming each offending field in its layer (`otel().enabled: must be boolean`).
 * @example
 * ```ts
 * const settings = validateSettingsLayers<StatusSettings>(schema, [['status()', options], ['plugins.status', config.plugins['status']]]);
 * ```
 */
export function validateSettingsLayers<T>(schema: SettingsSchema, layers: readonly SettingsLayer[], refine?: SettingsRefinement<T>): T {
  const problems = layers.flatMap(([where, settings]) => (settings === undefined ? [] : settingsProblems(schema, settings, where)));
  if (problems.length > 0) throw new ConfigError(problems);
  return validateSettings(schema, layers.map(([, settings]) => settings), layers.at(-1)?.[0] ?? '', refine);
}
