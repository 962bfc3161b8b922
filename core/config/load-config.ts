import { readFile } from 'node:fs/promises';
import { Ajv, type ErrorObject } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { configSchema } from './schema.js';
import { defaultPlans } from './default-plans.js';
import type { GatewayConfig, GatewayConfigInput } from './types.js';

/** A configuration that does not match the schema; the message names every offending field. */
export class ConfigError extends Error {
  /** One line per problem, each starting with the field's path (`networks[0].upstreams[1].url`). */
  readonly problems: readonly string[];
  constructor(problems: readonly string[], source?: string) {
    super(`invalid configuration${source === undefined ? '' : ` in ${source}`}:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: true, strictRequired: false, allowUnionTypes: true });
const validateSchema = ajv.compile(configSchema);

function fieldPath(error: ErrorObject): string {
  const parts = error.instancePath.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  let path = '';
  for (const part of parts) path += /^\d+$/.test(part) ? `[${part}]` : path === '' ? part : `.${part}`;
  if (error.keyword === 'required') {
    const missing = (error.params as { missingProperty: string }).missingProperty;
    path = path === '' ? missing : `${path}.${missing}`;
  }
  if (error.keyword === 'additionalProperties') {
    const extra = (error.params as { additionalProperty: string }).additionalProperty;
    path = path === '' ? extra : `${path}.${extra}`;
  }
  return path === '' ? '(root)' : path;
}

function describe(error: ErrorObject): string {
  if (error.keyword === 'required') return 'is required';
  if (error.keyword === 'additionalProperties') return 'is not a known field';
  if (error.keyword === 'enum') return `must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
  return error.message ?? 'is invalid';
}

/**
 * Validates a configuration object, applies defaults and checks cross-references (plans of keys, unique
 * names), returning the complete configuration.
 *
 * @throws ConfigError naming each offending field.
 * @example
 * ```ts
 * const config = resolveConfig({ networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: 'http://127.0.0.1:8545' }] }] });
 * ```
 */
export function resolveConfig(input: GatewayConfigInput | unknown, source?: string): GatewayConfig {
  const copy = structuredClone(input) as Record<string, unknown>;
  if (!validateSchema(copy)) {
    const seen = new Set<string>();
    const problems: string[] = [];
    for (const error of validateSchema.errors ?? []) {
      // oneOf failures repeat their branches' errors; the branch errors name the field better.
      if (error.keyword === 'oneOf') continue;
      const line = `${fieldPath(error)}: ${describe(error)}`;
      if (!seen.has(line)) problems.push(line), seen.add(line);
    }
    throw new ConfigError(problems, source);
  }
  const config = copy as unknown as GatewayConfig;
  config.plans = { ...defaultPlans, ...config.plans };
  const problems: string[] = [];
  config.keys.forEach((key, i) => {
    if (config.plans[key.plan] === undefined) problems.push(`keys[${i}].plan: unknown plan "${key.plan}"`);
  });
  const duplicate = (names: string[], field: string): void => {
    names.forEach((name, i) => {
      if (names.indexOf(name) !== i) problems.push(`${field.replace('*', String(i))}: duplicate "${name}"`);
    });
  };
  duplicate(config.keys.map((k) => k.key), 'keys[*].key');
  duplicate(config.networks.map((n) => n.name), 'networks[*].name');
  if (problems.length > 0) throw new ConfigError(problems, source);
  return config;
}

/**
 * Reads a JSON or YAML configuration file (by extension: `.json`, else YAML) and resolves it.
 *
 * @throws ConfigError when the file cannot be parsed or does not match the schema.
 */
export async function loadConfigFile(file: string): Promise<GatewayConfig> {
  const text = await readFile(file, 'utf8');
  let data: unknown;
  try {
    data = file.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new ConfigError([`(file): cannot be parsed: ${(error as Error).message}`], file);
  }
  return resolveConfig(data, file);
}
