import { GatewayError } from '../errors/gateway-error.js';
import { Errors } from '../errors/catalog.js';
import type { Network } from '../contracts/request-context.js';
import type { UpstreamSelector } from '../contracts/selector.js';

/**
 * The error of a call no upstream of `network` could serve: HTTP 503, `-33503`, with a `Retry-After`
 * of the seconds until an upstream may take traffic again (as the selector tells, at least 1).
 */
export function networkUnavailable(network: Network, selector: UpstreamSelector, message?: string, cause?: unknown): GatewayError {
  const seconds = selector.retryAfterSeconds?.(network) ?? 1;
  return new GatewayError(Errors.UPSTREAM_UNAVAILABLE, {
    message: message ?? `network ${network.name} is unavailable`,
    headers: { 'retry-after': String(seconds) },
    cause,
  });
}
