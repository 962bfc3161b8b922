/**
 * Values a configuration file takes from the environment are strings (`server.port: ${PORT}`); where the
 * gateway's schema wants a number, an integer or a boolean and the string spells one, the value becomes
 * that number or boolean. Only referenced values are turned: a number written in quotes in the file
 * stays the mistake the schema names. Plugins' sections are typed by nothing here: the gateway's schema
 * does not know their fields, and a plugin checks its section where it is assembled, without the file.
 *
 * @module
 */
import type { ErrorObject, ValidateFunction } from 'ajv';

/** The members a JSON pointer (a validation error's `instancePath`) names, unescaped. */
function pointerParts(instancePath: string): string[] {
  return instancePath.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** A field path as the configuration's problems and `interpolateEnv`'s fields write it (`networks[0].upstreams[1].url`). */
function fieldOf(instancePath: string): string {
  let path = '';
  for (const part of pointerParts(instancePath)) path += /^\d+$/.test(part) ? `[${part}]` : path === '' ? part : `.${part}`;
  return path;
}

const NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?$/;

/** `text` as the first of `wanted` it spells, else undefined. */
function typed(text: string, wanted: readonly string[]): number | boolean | undefined {
  if ((wanted.includes('number') || wanted.includes('integer')) && NUMBER.test(text)) {
    const value = Number(text);
    if (wanted.includes('number') || Number.isInteger(value)) return value;
  }
  if (wanted.includes('boolean') && (text === 'true' || text === 'false')) return text === 'true';
  return undefined;
}

function setAt(data: unknown, instancePath: string, value: unknown): void {
  const parts = pointerParts(instancePath);
  let target = data as Record<string, unknown>;
  for (const part of parts.slice(0, -1)) target = target[part] as Record<string, unknown>;
  target[parts.at(-1)!] = value;
}

function getAt(data: unknown, instancePath: string): unknown {
  let value = data;
  for (const part of pointerParts(instancePath)) value = (value as Record<string, unknown> | undefined)?.[part];
  return value;
}

/**
 * Turns, in `data` (in place), each value of `fields` (the fields taken from the environment) that
 * `validate` refuses as a string where it wants a number, an integer or a boolean, and that spells one,
 * into that number or boolean. `validate` runs on a copy, so its defaults do not land in `data`.
 */
export function typeEnvValues(data: unknown, fields: ReadonlySet<string>, validate: ValidateFunction): void {
  if (fields.size === 0 || data === null || typeof data !== 'object') return;
  if (validate(structuredClone(data))) return;
  for (const error of (validate.errors ?? []) as ErrorObject[]) {
    if (error.keyword !== 'type' || !fields.has(fieldOf(error.instancePath))) continue;
    const value = getAt(data, error.instancePath);
    if (typeof value !== 'string') continue;
    const wanted = (error.params as { type: string | string[] }).type;
    const turned = typed(value, Array.isArray(wanted) ? wanted : [wanted]);
    if (turned !== undefined) setAt(data, error.instancePath, turned);
  }
}
