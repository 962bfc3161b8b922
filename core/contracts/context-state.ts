// Typed per-call and per-connection state: the keys plugins create and the store that holds their values.
import { GatewayError } from '../errors/gateway-error.js';
import { Errors } from '../errors/catalog.js';

/**
 * A typed key into {@link RequestContext.state}. Create one per piece of plugin state.
 *
 * @example
 * ```ts
 * const ALLOWED = new ContextKey<boolean>('allowlist.allowed');
 * ctx.state.set(ALLOWED, true);
 * const allowed: boolean | undefined = ctx.state.get(ALLOWED);
 * ```
 */
export class ContextKey<T> {
  /** Description, for debugging. */
  readonly description: string;
  declare private readonly phantom: T;
  constructor(description: string) {
    this.description = description;
  }
}

/**
 * Per-call storage keyed by {@link ContextKey}. A key is written once with {@link ContextState.set}: a second
 * `set` of a key that holds a value fails the call with `STAGE_CONTRACT_VIOLATED` (two plugins claiming one
 * key, or a stage that runs twice, is a bug to see, not a value to lose). A stage that means to change a
 * value says so with {@link ContextState.replace}.
 */
export class ContextState {
  readonly #values = new Map<ContextKey<unknown>, unknown>();

  /** The value stored under `key`, if any. */
  get<T>(key: ContextKey<T>): T | undefined {
    return this.#values.get(key) as T | undefined;
  }

  /**
   * Stores `value` under `key`, which must not hold a value yet.
   *
   * @throws GatewayError `STAGE_CONTRACT_VIOLATED` when `key` already holds one.
   */
  set<T>(key: ContextKey<T>, value: T): void {
    if (this.#values.has(key)) {
      throw new GatewayError(Errors.STAGE_CONTRACT_VIOLATED, { message: `context key "${key.description}" already holds a value; use replace to change it` });
    }
    this.#values.set(key, value);
  }

  /** Stores `value` under `key`, replacing any value it held: an explicit overwrite. */
  replace<T>(key: ContextKey<T>, value: T): void {
    this.#values.set(key, value);
  }

  /** Whether `key` holds a value. */
  has(key: ContextKey<unknown>): boolean {
    return this.#values.has(key);
  }
}
