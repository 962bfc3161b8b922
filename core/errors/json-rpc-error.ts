// The error object of a JSON-RPC answer: the wire form every GatewayError is sent as. It lives beside the
// errors so that they import nothing above them.

/** A JSON-RPC 2.0 error object. */
export interface JsonRpcErrorObject {
  /** Stable numeric code. */
  code: number;
  /** Human-readable message. */
  message: string;
  /** Extra data (for a revert: the encoded revert payload). */
  data?: unknown;
}
