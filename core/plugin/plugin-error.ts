const BRAND = Symbol.for('tollgate.PluginError');

/**
 * Stable codes of {@link PluginError}: what went wrong while a gateway was assembled or started.
 *
 * - `PLUGIN_INVALID`: a plugin's settings or registration were refused (no I/O had started).
 * - `PLUGIN_CONFLICT`: two plugins (or families, or stages) claim the same name, or a dependency is missing.
 * - `PLUGIN_START_FAILED`: a plugin's `start`, an embedded upstream or the upstream selector failed to
 *   start; everything started before it was stopped again.
 */
export type PluginErrorCode = 'PLUGIN_INVALID' | 'PLUGIN_CONFLICT' | 'PLUGIN_START_FAILED';

/** Details of a {@link PluginError}. */
export interface PluginErrorOptions {
  /** The stable code; `PLUGIN_INVALID` when absent. */
  readonly code?: PluginErrorCode;
  /** The plugin concerned, when there is one. */
  readonly plugin?: string;
  /** The underlying failure, for logs. */
  readonly cause?: unknown;
}

/**
 * A plugin problem found while assembling or starting the gateway. `createGateway` rejects with it after
 * stopping whatever it had started. `instanceof` holds across copies of the package: the check uses a
 * global symbol brand.
 */
export class PluginError extends Error {
  /** The stable code. */
  readonly code: PluginErrorCode;
  /** The plugin concerned, when there is one. */
  readonly plugin: string | undefined;

  constructor(message: string, options: PluginErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'PluginError';
    this.code = options.code ?? 'PLUGIN_INVALID';
    this.plugin = options.plugin;
  }

  /** True for any `PluginError`, including one created by another copy of this package. */
  static is(value: unknown): value is PluginError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }

  /** `instanceof PluginError` holds for errors of another copy of the package too (see {@link PluginError.is}). */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return this === PluginError ? PluginError.is(value) : Function.prototype[Symbol.hasInstance].call(this, value);
  }
}

Object.defineProperty(PluginError.prototype, BRAND, { value: true });
