
/** How a streamed answer ended, as its transport saw it. */
export interface StreamOutcome {
  /** Bytes written to the client. */
  readonly bytes: number;
  /** Whether the stream ended early (the upstream failed or the client went away). */
  readonly failed: boolean;
}
