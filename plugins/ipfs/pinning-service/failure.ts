import { Errors, type GatewayError } from '../../../core/plugin-api.js';

/** The spec's `Failure` body: `{"error":{"reason","details"}}`. */
export function failureBody(reason: string, details?: string): string {
  return JSON.stringify({ error: { reason, ...(details === undefined ? {} : { details }) } });
}

/** How a refusal reaches a Pinning Service API client. */
export interface FailureAnswer {
  readonly status: number;
  readonly reason: string;
  readonly details: string;
}

/**
 * The spec's status and `reason` for a gateway refusal: 401 `UNAUTHORIZED`, 404 `NOT_FOUND`, 409
 * `INSUFFICIENT_FUNDS` (a key out of credits or past its plan's `storageBytes`: the spec's response
 * table maps 409 to `InsufficientFunds` for every operation; the file API keeps kubo's 402), 400
 * `BAD_REQUEST`, 403 `FORBIDDEN`, 429 `RATE_LIMITED`,
 * 413 `PAYLOAD_TOO_LARGE`, and 5xx as the gateway's status with `INTERNAL_SERVER_ERROR` or the error's name.
 */
export function failureOf(error: GatewayError): FailureAnswer {
  const details = error.message;
  switch (error.entry) {
    case Errors.UNAUTHORIZED:
      return { status: 401, reason: 'UNAUTHORIZED', details: details === Errors.UNAUTHORIZED.message ? 'invalid API key or secret' : details };
    case Errors.NOT_FOUND:
    case Errors.METHOD_NOT_FOUND:
      return { status: 404, reason: 'NOT_FOUND', details };
    case Errors.CREDITS_EXHAUSTED:
    case Errors.STORAGE_LIMIT_REACHED:
      return { status: 409, reason: 'INSUFFICIENT_FUNDS', details };
    case Errors.FORBIDDEN:
      return { status: 403, reason: 'FORBIDDEN', details };
    case Errors.RATE_LIMITED:
    case Errors.CONCURRENCY_LIMITED:
      return { status: 429, reason: 'RATE_LIMITED', details };
    case Errors.BODY_TOO_LARGE:
      return { status: 413, reason: 'PAYLOAD_TOO_LARGE', details };
    case Errors.HTTP_METHOD_NOT_ALLOWED:
      return { status: 405, reason: 'METHOD_NOT_ALLOWED', details };
    default:
      if (error.httpStatus < 500 || error.entry === Errors.INVALID_PARAMS || error.entry === Errors.LIMIT_EXCEEDED) return { status: 400, reason: 'BAD_REQUEST', details };
      return { status: error.httpStatus, reason: error.httpStatus === 500 ? 'INTERNAL_SERVER_ERROR' : error.entry.name, details };
  }
}
