/**
 * How an upstream attempt failed, which decides whether another upstream may be tried. `unsupported`:
 * the node answered that it does not serve the method (JSON-RPC's -32601); it is not a health failure.
 */
export type FailureKind = 'connect' | 'timeout' | 'reset' | 'status' | 'overloaded' | 'bad-response' | 'unsupported';

/**
 * An upstream attempt that did not produce an answer: the node was unreachable, too slow, answered with
 * an HTTP error status, or said it was over capacity. A node's answer to the call itself (a revert, an
 * empty result) is never an `UpstreamFailure`.
 */
export class UpstreamFailure extends Error {
  /** What happened. */
  readonly kind: FailureKind;
  /** Whether the upstream may have received the request (so a non-idempotent call must not be resent). */
  readonly maybeReceived: boolean;
  /** HTTP status, for `status` and `overloaded` failures. */
  readonly status: number | undefined;

  constructor(kind: FailureKind, message: string, options: { maybeReceived: boolean; status?: number; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'UpstreamFailure';
    this.kind = kind;
    this.maybeReceived = options.maybeReceived;
    this.status = options.status;
  }
}

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
