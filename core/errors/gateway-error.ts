import type { ErrorEntry } from './catalog.js';
import type { JsonRpcErrorObject } from './json-rpc-error.js';

const BRAND = Symbol.for('tollgate.GatewayError');

/** Options that refine a catalog entry for one occurrence of an error. */
export interface GatewayErrorOptions {
  /** Replaces the catalog's default message. */
  message?: string;
  /** JSON-RPC `error.data` sent to the client. */
  data?: unknown;
  /** Extra HTTP response headers (for example `Retry-After`). */
  headers?: Record<string, string>;
  /** The underlying cause, kept for logs and never sent to the client. */
  cause?: unknown;
}

/**
 * The one error type of the pipeline: a catalog entry (stable code and HTTP status) plus the details of
 * this occurrence. Stages fail a call by throwing (or emitting) a `GatewayError`; transports turn it into
 * their wire format. `instanceof` works across copies of the package because the check uses a global
 * symbol brand.
 *
 * @example
 * ```ts
 * import { GatewayError, Errors } from 'tollgate';
 * throw new GatewayError(Errors.INVALID_PARAMS, { message: 'invalid argument 0: missing address' });
 * ```
 */
export class GatewayError extends Error {
  /**
   * The catalog entry this error is an instance of. Not enumerable: loggers walk an error's own
   * properties, and a frozen, error-shaped entry among them made pino's error serializer throw.
   */
  declare readonly entry: ErrorEntry;
  /** JSON-RPC error code. */
  readonly code: number;
  /** HTTP status a transport should answer with. */
  readonly httpStatus: number;
  /** JSON-RPC `error.data`, when there is any. */
  readonly data: unknown;
  /** Extra HTTP response headers. */
  readonly headers: Record<string, string> | undefined;

  constructor(entry: ErrorEntry, options: GatewayErrorOptions = {}) {
    super(options.message ?? entry.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    Object.defineProperty(this, 'entry', { value: entry, enumerable: false, writable: false, configurable: false });
    this.code = entry.code;
    this.httpStatus = entry.httpStatus;
    this.data = options.data;
    this.headers = options.headers;
  }

  /** True for any `GatewayError`, including one created by another copy of this package. */
  static is(value: unknown): value is GatewayError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }

  /** `instanceof GatewayError` holds for errors of another copy of the package too (see {@link GatewayError.is}). */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // A subclass keeps the ordinary prototype check, so `instanceof Subclass` stays precise.
    return this === GatewayError ? GatewayError.is(value) : Function.prototype[Symbol.hasInstance].call(this, value);
  }

  /** The JSON-RPC error object for this error: code, message and data, never a stack. */
  toJSON(): JsonRpcErrorObject {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

Object.defineProperty(GatewayError.prototype, BRAND, { value: true });

/**
 * Turns anything a stage may have thrown into a `GatewayError`; unknown failures become the catalog's
 * internal error, with the original kept as `cause` for the logs.
 */
export function toGatewayError(error: unknown, fallback: ErrorEntry): GatewayError {
  if (GatewayError.is(error)) return error;
  return new GatewayError(fallback, { cause: error });
}
