import { Errors } from '../errors/catalog.js';
import { GatewayError } from '../errors/gateway-error.js';

/** The error a call fails with when it was cancelled before its answer (its client went away). */
export function cancelledError(): GatewayError {
  return new GatewayError(Errors.UPSTREAM_UNAVAILABLE, { message: 'the client went away' });
}
