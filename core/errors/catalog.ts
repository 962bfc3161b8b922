/**
 * One entry of the error catalog: a stable name, the JSON-RPC code, the HTTP status transports use, the
 * default message, and advice for clients (rendered in `docs/errors.md`).
 */
export interface ErrorEntry {
  /** Stable identifier, SCREAMING_SNAKE_CASE. */
  readonly name: string;
  /** JSON-RPC `error.code`. */
  readonly code: number;
  /** HTTP status of the response when this is the outcome of a single request. */
  readonly httpStatus: number;
  /** Default `error.message`. */
  readonly message: string;
  /** What a client should do about it. */
  readonly advice: string;
}

function entry(name: string, code: number, httpStatus: number, message: string, advice: string): ErrorEntry {
  return Object.freeze({ name, code, httpStatus, message, advice });
}

/**
 * The catalog of every error the gateway itself produces. Errors that upstream nodes return (a revert,
 * code `3`) pass through unchanged and are not listed here.
 *
 * Codes follow JSON-RPC 2.0 for envelope and parameter errors, EIP-1474's `-32005` for limits, and the
 * `-33xxx` range for access errors (key, balance, throughput), as hosted node services do.
 */
export const Errors = Object.freeze({
  /** Parse error (code -32700, HTTP 400). */
  PARSE_ERROR: entry('PARSE_ERROR', -32700, 400, 'Parse error', 'Send a body that is valid JSON.'),
  /** Invalid request (code -32600, HTTP 400). */
  INVALID_REQUEST: entry('INVALID_REQUEST', -32600, 400, 'Invalid request', 'Send a JSON-RPC 2.0 request object (jsonrpc "2.0", a string method, array params) or a non-empty array of them.'),
  /** Batch too large (code -32600, HTTP 400). */
  BATCH_TOO_LARGE: entry('BATCH_TOO_LARGE', -32600, 400, 'Batch too large', 'Split the batch into smaller batches.'),
  /** Request body too large (code -32600, HTTP 413). */
  BODY_TOO_LARGE: entry('BODY_TOO_LARGE', -32600, 413, 'Request body too large', 'Send smaller requests; split large batches.'),
  /** Content-Type must be application/json (code -32600, HTTP 415). */
  UNSUPPORTED_MEDIA_TYPE: entry('UNSUPPORTED_MEDIA_TYPE', -32600, 415, 'Content-Type must be application/json', 'Send the header Content-Type: application/json.'),
  /** HTTP method not allowed: use POST (code -32600, HTTP 405). */
  HTTP_METHOD_NOT_ALLOWED: entry('HTTP_METHOD_NOT_ALLOWED', -32600, 405, 'HTTP method not allowed: use POST', 'Send JSON-RPC calls with HTTP POST.'),
  /** Not found (code -32600, HTTP 404). */
  NOT_FOUND: entry('NOT_FOUND', -32600, 404, 'Not found', 'Check the URL: the network\'s base followed by the transport\'s path (see the transport\'s docs).'),
  /**
   * The call needs the chain head (a filter's start, a log range to `latest`) and the gateway could not
   * learn it: its own head lookup got a node's error (code -33506, HTTP 503). Not charged.
   */
  HEAD_UNKNOWN: entry('HEAD_UNKNOWN', -33506, 503, 'Chain head unknown', 'The gateway could not learn the chain head the call needs (the message names its lookup and the node\'s answer to it); retry after the Retry-After header\'s seconds. The call was not charged.'),
  /** Method not found (code -32601, HTTP 200). */
  METHOD_NOT_FOUND: entry('METHOD_NOT_FOUND', -32601, 200, 'Method not found', 'Call a method this network offers; see the method table in the docs.'),
  /** Method not supported (code -32004, HTTP 200): a method the gateway knows and refuses on purpose, the message says why. */
  METHOD_NOT_SUPPORTED: entry('METHOD_NOT_SUPPORTED', -32004, 200, 'Method not supported', 'The message says why the gateway does not serve the method and what to do instead.'),
  /** Invalid params (code -32602, HTTP 200). */
  INVALID_PARAMS: entry('INVALID_PARAMS', -32602, 200, 'Invalid params', 'Fix the parameter the message names.'),
  /** Internal error (code -32603, HTTP 500). */
  INTERNAL_ERROR: entry('INTERNAL_ERROR', -32603, 500, 'Internal error', 'Retry later; the call was not charged.'),
  /** A pipeline stage broke its contract (code -32603, HTTP 500). */
  STAGE_CONTRACT_VIOLATED: entry('STAGE_CONTRACT_VIOLATED', -32603, 500, 'Internal error: a pipeline stage broke its contract', 'Retry later; the call was not charged. Operators: a plugin stage emitted no context, or more than one.'),
  /** Limit exceeded (code -32005, HTTP 200). */
  LIMIT_EXCEEDED: entry('LIMIT_EXCEEDED', -32005, 200, 'Limit exceeded', 'Narrow the query (a smaller block range, fewer addresses or topics). Not charged, unless the nodes already ran the query\'s parts (a split query that reached the result or time limit is charged once, at its price).'),
  /** Invalid API key (code -33001, HTTP 401). */
  UNAUTHORIZED: entry('UNAUTHORIZED', -33001, 401, 'Invalid API key', 'Use a valid, active API key where the transport expects it (the URL path, for most).'),
  /** Forbidden (code -33100, HTTP 403). */
  FORBIDDEN: entry('FORBIDDEN', -33100, 403, 'Forbidden', 'The key is not allowed to make this call; check its settings.'),
  /** Daily credit limit reached (code -33000, HTTP 402). */
  CREDITS_EXHAUSTED: entry('CREDITS_EXHAUSTED', -33000, 402, 'Daily credit limit reached', 'Wait until the balance resets (error.data.resetsAt, 00:00 UTC) or move the key to a larger plan.'),
  /**
   * Storage limit reached (code -33002, HTTP 402): what the call would store (a pin, an upload) would take
   * the key's stored bytes past its plan's allowance.
   */
  STORAGE_LIMIT_REACHED: entry('STORAGE_LIMIT_REACHED', -33002, 402, 'Storage limit reached', 'Remove pins the key no longer needs (each frees its bytes) or move the key to a plan with a larger storage allowance. Nothing was stored and the call was not charged.'),
  /**
   * A payment sent with the call to buy credits was refused (code -33003, HTTP 402): `error.data` has the
   * refusal's `code` and `reason`, and the offer again. Nothing was credited and the call was not served.
   */
  PAYMENT_REFUSED: entry('PAYMENT_REFUSED', -33003, 402, 'Payment refused', 'Read error.data.reason (a bad signature, an expired or already used authorization, a wrong amount or recipient, an empty wallet), then pay again as the offer in the answer says. Nothing was credited and the call was not served.'),
  /**
   * A payment sent with the call could not be taken now: whoever checks and settles payments could not
   * be reached (code -33508, HTTP 503). Nothing was credited and the call was not served.
   */
  PAYMENT_UNAVAILABLE: entry('PAYMENT_UNAVAILABLE', -33508, 503, 'Payment unavailable', 'Retry later; nothing was credited and the call was not served.'),
  /**
   * A call without an API key, on a gateway that sells keys to wallets (code -33004, HTTP 402): the
   * answer's `PAYMENT-REQUIRED` header (and `error.data.x402`) offers the bundles of the wallets' plan.
   */
  KEY_OR_PAYMENT_REQUIRED: entry('KEY_OR_PAYMENT_REQUIRED', -33004, 402, 'API key or payment required', 'Send an API key, or pay a bundle of the offer in PAYMENT-REQUIRED (x402) and repeat the call with PAYMENT-SIGNATURE: the answer carries the wallet\'s key in X-Tollgate-Key.'),
  /** Throughput limit exceeded (code -33200, HTTP 429). */
  RATE_LIMITED: entry('RATE_LIMITED', -33200, 429, 'Throughput limit exceeded', 'Slow down: retry after the Retry-After header\'s seconds.'),
  /** Too many calls of one kind in flight for the key (code -33201, HTTP 429): the key runs the most the gateway allows at once. */
  CONCURRENCY_LIMITED: entry('CONCURRENCY_LIMITED', -33201, 429, 'Too many calls in flight', 'Wait for the key\'s earlier calls of this kind to end, then retry (after the Retry-After header\'s seconds). Not charged.'),
  /** Network unavailable (code -33503, HTTP 503). */
  UPSTREAM_UNAVAILABLE: entry('UPSTREAM_UNAVAILABLE', -33503, 503, 'Network unavailable', 'No node could serve the call; retry after the Retry-After header\'s seconds. The call was not charged.'),
  /** Upstream timeout (code -33504, HTTP 504). */
  UPSTREAM_TIMEOUT: entry('UPSTREAM_TIMEOUT', -33504, 504, 'Upstream timeout', 'The node did not answer in time; retry. The call was not charged.'),
  /** The nodes that could serve the call are behind the head already shown (code -33505, HTTP 503). */
  UPSTREAM_BEHIND: entry('UPSTREAM_BEHIND', -33505, 503, 'Upstream behind the chain head', 'The nodes that could answer have not reached the chain head the gateway already showed; retry after the Retry-After header\'s seconds. The call was not charged.'),
  /** Metering unavailable (code -33507, HTTP 503). */
  METERING_UNAVAILABLE: entry('METERING_UNAVAILABLE', -33507, 503, 'Metering unavailable', 'The gateway cannot reach its credit ledger right now; retry after the Retry-After header\'s seconds. The call was not charged.'),
  /** Bad response from upstream (code -33502, HTTP 502). */
  UPSTREAM_BAD_RESPONSE: entry('UPSTREAM_BAD_RESPONSE', -33502, 502, 'Bad response from upstream', 'Retry; the call was not charged.'),
  /** No upstream of the network can hold a subscription at all (none is configured for it): retrying does not help. */
  SUBSCRIPTIONS_NOT_SUPPORTED: entry('SUBSCRIPTIONS_NOT_SUPPORTED', -32004, 200, 'Subscriptions not supported', 'No node of this network can hold a subscription; poll instead (a new block number, new logs), or ask the operator to give the network an upstream that can. Not charged; retrying does not help.'),
});

/** The name of an entry of {@link Errors}. */
export type ErrorName = keyof typeof Errors;
