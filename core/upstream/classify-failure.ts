// Turns what an upstream client threw into an UpstreamFailure the selector and failover understand.
import { UpstreamFailure } from '../contracts/upstream-failure.js';

const CONNECT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

/**
 * What a thrown error means for an upstream attempt: itself when it is already an {@link UpstreamFailure}
 * (an upstream classifies its own transport's errors), else a reset the upstream may have received.
 */
export function asUpstreamFailure(error: unknown): UpstreamFailure {
  return error instanceof UpstreamFailure ? error : new UpstreamFailure('reset', String(error), { maybeReceived: true, cause: error });
}

/** Classifies an error thrown by the HTTP client. */
export function classifyTransportError(error: unknown): UpstreamFailure {
  const code = (error as { code?: string }).code ?? '';
  const message = (error as Error).message ?? String(error);
  if (CONNECT_CODES.has(code)) return new UpstreamFailure('connect', `connect failed: ${code}`, { maybeReceived: false, cause: error });
  if (TIMEOUT_CODES.has(code) || (error as Error).name === 'TimeoutError') {
    return new UpstreamFailure('timeout', `timed out: ${code || message}`, { maybeReceived: true, cause: error });
  }
  return new UpstreamFailure('reset', `connection failed: ${code || message}`, { maybeReceived: true, cause: error });
}
