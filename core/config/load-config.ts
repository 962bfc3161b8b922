import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { configSchema } from './schema.js';
import { createSchemaValidator, schemaProblems } from './schema-problems.js';
import { defaultPlans } from './default-plans.js';
import type { GatewayConfig, GatewayConfigInput } from './types.js';
import { interpolateEnv, type ConfigEnvironment } from './interpolate-env.js';
import { addressRangeProblem } from './address-ranges.js';
import { typeEnvValues } from './env-types.js';

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
  return resolveWithEnv(input, source, new Set());
}

/** {@link resolveConfig}, the values of `fromEnv` (fields taken from the environment) typed as the schema wants them. */
function resolveWithEnv(input: unknown, source: string | undefined, fromEnv: ReadonlySet<string>): GatewayConfig {
  const copy = structuredClone(input) as Record<string, unknown>;
  typeEnvValues(copy, fromEnv, validateSchema);
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
  config.server.trustedProxies.forEach((entry, i) => {
    const problem = addressRangeProblem(entry);
    if (problem !== undefined) problems.push(`server.trustedProxies[${i}]: ${problem}`);
  });
  config.networks.forEach((network, i) => {
    // Forwarding is an allowlist: a policy that lists nothing would refuse every name, surely not what was meant.
    const policy = network.unknownMethods;
    if (policy?.policy === 'forward' && (policy.namespaces ?? []).length + (policy.methods ?? []).length === 0) {
      problems.push(`networks[${i}].unknownMethods: policy forward lists nothing to forward: give namespaces (eth, trace) or methods`);
    }
  });
  duplicate(config.keys.map((k) => k.key), 'keys[*].key');
  duplicate(config.networks.map((n) => n.name), 'networks[*].name');
  if (problems.length > 0) throw new ConfigError(problems, source);
  return config;
}

/** A configuration file as read: its data with environment references replaced, before validation. */
export interface ConfigFileData {
  /** The parsed data, `${VAR}` references replaced. */
  readonly data: unknown;
  /** The fields whose value came from the environment (to be masked wherever the configuration is shown). */
  readonly fromEnv: readonly string[];
  /** The fields that held a reference, filled by the variable or its default (typed as the schema wants when the file is resolved). */
  readonly referenced: readonly string[];
}

/**
 * Reads and parses a JSON or YAML configuration file (by extension: `.json`, else YAML) and replaces its
 * environment references (`${VAR}`, `${VAR:-default}`; `$${` for a literal `${`), without validating it.
 *
 * @throws ConfigError when the file cannot be parsed or names a variable that is not set.
 */
export async function readConfigFile(file: string, env: ConfigEnvironment = process.env): Promise<ConfigFileData> {
  const text = await readFile(file, 'utf8');
  let data: unknown;
  try {
    data = file.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new ConfigError([`(file): cannot be parsed: ${(error as Error).message}`], file);
  }
  const interpolated = interpolateEnv(data, env);
  if (interpolated.problems.length > 0) throw new ConfigError(interpolated.problems, file);
  return { data: interpolated.value, fromEnv: interpolated.fields, referenced: interpolated.referenced };
}

/**
 * Reads a JSON or YAML configuration file (by extension: `.json`, else YAML), replaces its environment
 * references (`${VAR}`, `${VAR:-default}`, read from `env`) and resolves it. A referenced value where
 * the gateway's schema wants a number, an integer or a boolean becomes one when it spells one
 * (`server.port: ${PORT}`); a plugin's section (`plugins.<name>`) is the plugin's to check and keeps it as written.
 *
 * @throws ConfigError when the file cannot be parsed, names a variable that is not set, or does not
 * match the schema.
 */
export async function loadConfigFile(file: string, env: ConfigEnvironment = process.env): Promise<GatewayConfig> {
  const { data, referenced } = await readConfigFile(file, env);
  return resolveWithEnv(data, file, new Set(referenced));
}
