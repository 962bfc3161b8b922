import { Ajv, type ValidateFunction } from 'ajv';
import { ConfigError } from './load-config.js';
import { schemaProblems } from './schema-problems.js';

/** The JSON Schema of a plugin's settings (draft-07, as the gateway's own configuration schema). */
export type SettingsSchema = Readonly<Record<string, unknown>>;

// The same options as the gateway's configuration: every problem at once, defaults filled in.
const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: true, strictRequired: false, allowUnionTypes: true });
const compiled = new WeakMap<SettingsSchema, ValidateFunction>();

/**
 * Validates a plugin's settings with the gateway's own validator and error format: `sources` (the
 * plugin function's options, then the config's `plugins.<name>`, say) are merged in order, a later
 * defined value winning, then checked against `schema`, whose defaults fill what none gave.
 *
 * @param where The settings' place in the config, prefixed to each problem (`plugins.health`).
 * @throws ConfigError naming each offending field (`plugins.health.timeoutMs: must be >= 1`).
 * @example
 * ```ts
 * const schema = {
 *   type: 'object',
 *   additionalProperties: false,
 *   properties: { path: { type: 'string', pattern: '^/', default: '/status' } },
 * } as const;
 * const settings = validateSettings<{ path: string }>(schema, [options, config.plugins['status']], 'plugins.status');
 * ```
 */
export function validateSettings<T>(schema: SettingsSchema, sources: ReadonlyArray<object | undefined>, where: string): T {
  let validate = compiled.get(schema);
  if (validate === undefined) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  const merged: Record<string, unknown> = {};
  for (const source of sources) {
    for (const [name, value] of Object.entries(source ?? {})) if (value !== undefined) merged[name] = value;
  }
  if (!validate(merged)) throw new ConfigError(schemaProblems(validate.errors ?? [], where));
  return merged as T;
}
