import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { configSchema } from './schema.js';
import { createSchemaValidator, schemaProblems } from './schema-problems.js';
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

const ajv = createSchemaValidator(true);
const validateSchema = ajv.compile(configSchema);

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
    const problems = schemaProblems(validateSchema.errors ?? []);
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
