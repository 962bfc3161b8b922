// How a streamed answer ended: what a transport reports so the call's usage counts the bytes it sent.
/** How a streamed answer ended, as its transport saw it. */
export interface StreamOutcome {
  /** Bytes written to the client. */
  readonly bytes: number;
  /** Whether the stream ended early (the upstream failed or the client went away). */
  readonly failed: boolean;
}
