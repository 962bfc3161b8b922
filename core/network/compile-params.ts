import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import type { MethodDefinition } from '../contracts/request-context.js';

/** Checks a call's params; returns an error message naming the parameter, or undefined when valid. */
export type ParamsValidator = (params: unknown) => string | undefined;

const ajv = new Ajv2020({ allErrors: false, strict: false, validateFormats: false, verbose: true });
const cache = new WeakMap<MethodDefinition, ParamsValidator>();

function describe(error: ErrorObject, names: readonly string[] | undefined): string {
  const segments = error.instancePath.split('/').slice(1);
  const params = error.params as Record<string, unknown>;
  if (segments.length === 0) {
    if (error.keyword === 'minItems') {
      const missing = Array.isArray(error.data) ? error.data.length : 0;
      return `missing value for required argument ${missing}${argumentName(names, missing)}`;
    }
    if (error.keyword === 'maxItems' || (error.keyword === 'items' && params.limit !== undefined)) return `too many arguments, want at most ${String(params.limit)}`;
    if (error.keyword === 'type') return 'params must be an array';
    return error.message ?? 'invalid params';
  }
  const index = Number(segments[0]);
  const where = segments.length > 1 ? ` ${segments.slice(1).join('.')}` : '';
  let what = error.message ?? 'is invalid';
  if (error.keyword === 'required') what = `missing required field "${String(params.missingProperty)}"`;
  else if (error.keyword === 'additionalProperties') what = `unknown field "${String(params.additionalProperty)}"`;
  else if (error.keyword === 'enum') what = `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
  else if (error.keyword === 'not' || error.keyword === 'oneOf' || error.keyword === 'anyOf') what = error.parentSchema?.description !== undefined ? String(error.parentSchema.description) : (error.message ?? 'is invalid');
  else if (error.keyword === 'const') what = `must be ${JSON.stringify(params.allowedValue)}${typeof error.parentSchema?.description === 'string' ? ` (${error.parentSchema.description})` : ''}`;
  else if (error.keyword === 'pattern' && typeof error.parentSchema?.description === 'string') what = `must be ${error.parentSchema.description}`;
  else if (error.keyword === 'type') what = `must be ${String(params.type).split(',').join(' or ')}`;
  else if (error.keyword === 'dependentRequired') what = `"${String(params.property)}" requires "${String(params.missingProperty)}"`;
  return `invalid argument ${index}${argumentName(names, index)}:${where} ${what}`;
}

function argumentName(names: readonly string[] | undefined, index: number): string {
  const name = names?.[index];
  return name === undefined ? '' : ` (${name})`;
}

/**
 * Compiles a method's params schema once and returns its validator. Validators are cached per method
 * definition, so calling this again is free.
 */
export function compileParams(method: MethodDefinition): ParamsValidator {
  let validator = cache.get(method);
  if (validator !== undefined) return validator;
  const check: ValidateFunction = ajv.compile(method.params as Record<string, unknown> | boolean);
  const extra = method.checkParams;
  validator = extra === undefined
    ? (params) => (check(params) ? undefined : describe(check.errors![0]!, method.paramNames))
    : (params) => (check(params) ? extra(params) : describe(check.errors![0]!, method.paramNames));
  cache.set(method, validator);
  return validator;
}
