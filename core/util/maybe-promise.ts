/** A value or a promise of it: stores answer synchronously when they can, which keeps the hot path short. */
export type MaybePromise<T> = T | Promise<T>;

/** A JSON Schema (draft 2020-12) document, as a plain object. */
export type JsonSchema = object | boolean;

/** True when `value` is a promise (or any thenable). */
export function isPromise<T>(value: MaybePromise<T>): value is Promise<T> {
  return typeof (value as Promise<T> | undefined)?.then === 'function';
}
