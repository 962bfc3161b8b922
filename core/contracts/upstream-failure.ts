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
