/**
 * Parameter reading with the rules and wording of agave's jsonrpc-core and serde: positional params,
 * optional trailing ones, `null` for an absent option, unknown config fields ignored.
 *
 * @module
 */
import { RpcError } from './rpc-error.js';

/** serde's description of an unexpected JSON value (`integer \`5\``, `string "x"`, `map`...). */
export function unexpected(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return `boolean \`${value}\``;
  if (typeof value === 'number') return Number.isInteger(value) ? `integer \`${value}\`` : `floating point \`${value}\``;
  if (typeof value === 'string') return `string ${JSON.stringify(value)}`;
  if (Array.isArray(value)) return 'sequence';
  return 'map';
}

/** A serde error, as jsonrpc-core wraps it: `-32602` `Invalid params: <serde message>.` */
export function serdeError(message: string): RpcError {
  return RpcError.invalidParams(`Invalid params: ${message}.`);
}

/** serde_json's `Debug` of a JSON value, as jsonrpc-core puts it in `error.data`. */
export function debugJson(value: unknown): string {
  if (value === null) return 'Null';
  if (typeof value === 'boolean') return `Bool(${value})`;
  if (typeof value === 'number') return `Number(${value})`;
  if (typeof value === 'string') return `String(${JSON.stringify(value)})`;
  if (Array.isArray(value)) return `Array([${value.map(debugJson).join(', ')}])`;
  return `Object({${Object.entries(value as Record<string, unknown>).map(([k, v]) => `${JSON.stringify(k)}: ${debugJson(v)}`).join(', ')}})`;
}

/** jsonrpc-core's check for a method without parameters: absent or `[]`. */
export function expectNoParams(params: unknown): void {
  if (params === undefined || (Array.isArray(params) && params.length === 0)) return;
  const shown = Array.isArray(params) ? debugJson(params) : `Map(${debugJson(params).replace(/^Object\(|\)$/g, '')})`;
  throw RpcError.invalidParams('Invalid parameters: No parameters were expected', shown);
}

/** Reads positional params: between `min` and `max` of them (jsonrpc-derive's optional trailing arguments). */
export function positional(params: unknown, min: number, max: number): unknown[] {
  if (params !== undefined && !Array.isArray(params)) throw RpcError.invalidParams('`params` should be an array');
  const list = params ?? [];
  if (list.length < min || list.length > max) {
    throw RpcError.invalidParams(min === max ? `Expected ${min} parameters.` : `Expected from ${min} to ${max} parameters.`, `Got: ${list.length}`);
  }
  return list;
}

/** A required string. */
export function readString(value: unknown): string {
  if (typeof value !== 'string') throw serdeError(`invalid type: ${unexpected(value)}, expected a string`);
  return value;
}

/** An optional struct: absent or null → undefined; otherwise an object. */
export function readConfig(value: unknown, struct: string): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) throw serdeError(`invalid type: ${unexpected(value)}, expected struct ${struct}`);
  return value as Record<string, unknown>;
}

/** An optional u64 field: absent or null → undefined. */
export function readU64(value: unknown, what = 'u64'): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 2 ** 64) {
    if (typeof value === 'number' && Number.isInteger(value) && value < 0) throw serdeError(`invalid value: integer \`${value}\`, expected ${what}`);
    throw serdeError(`invalid type: ${unexpected(value)}, expected ${what}`);
  }
  return value;
}

/** An optional unit-variant enum field: absent or null → undefined; an unknown variant is refused. */
export function readVariant<T extends string>(value: unknown, variants: readonly T[]): T | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw serdeError(`invalid type: ${unexpected(value)}, expected string or map`);
  if (!(variants as readonly string[]).includes(value)) {
    throw serdeError(`unknown variant \`${value}\`, expected one of ${variants.map((v) => `\`${v}\``).join(', ')}`);
  }
  return value as T;
}

/**
 * The commitment of a config object. agave reads it through a flattened `Option<CommitmentConfig>`,
 * and serde turns a failure there into `None`: an unknown or malformed level silently means the
 * default, `finalized`. Reproduced as is.
 */
export function readCommitment<T extends string>(value: unknown, levels: readonly T[], fallback: T): T {
  return typeof value === 'string' && (levels as readonly string[]).includes(value) ? (value as T) : fallback;
}
