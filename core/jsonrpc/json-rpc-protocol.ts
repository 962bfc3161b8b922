import type { BatchCodec, CallProtocol, NetworkFamily, RequestContext } from '../contracts/request-context.js';
import type { UpstreamReply } from '../contracts/upstream.js';
import { UpstreamFailure } from '../contracts/upstream-failure.js';
import { encodeRequest } from './encode.js';
import { arrayElements, memberRange } from './scan.js';
import { keyAnchor } from './member-scan.js';

const jsonRpcProtocols = new WeakSet<CallProtocol>();

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;

function firstByte(body: Uint8Array): number | undefined {
  for (const byte of body) if (byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09) return byte;
  return undefined;
}

/** Error bodies are small; a larger reply is a result and is never parsed here. */
const MAX_ERROR_BODY = 4096;
/**
 * What a body must hold to have an `error` member (`rror"`: the scanner's anchor for the key, searched
 * from a char rare in hex answers); a body holding it elsewhere is parsed.
 */
const ERROR_MEMBER = keyAnchor('error');

/**
 * What providers say when the *provider* is out of capacity or throttling the gateway, as opposed to the
 * call being wrong: Infura's `daily request count exceeded, request rate limited`, EIP-1474's `-32005`
 * `limit exceeded`, `rate limit`, `too many requests`, `compute units per second capacity`, QuickNode's
 * `request limit reached`, `server is busy`... A query the node refuses for its size (`query returned
 * more than 10000 results`, `query timeout exceeded`, a block range too large) is an answer for the
 * client, and none of these phrases match it.
 */
const CAPACITY_MESSAGE = /\b(?:rate[\s_-]?limit(?:ed|s)?|too many requests|limit (?:exceeded|reached)|request (?:rate|count|limit) (?:exceeded|reached)|daily request count|capacity|quota|throttl\w*|compute units|credits? (?:limit|exhausted|exceeded)|(?:server|node) (?:is )?(?:too )?busy|over(?:loaded| rate limit))\b/i;


/** Error codes providers use for capacity errors; a message is still required to match for `-32005`, which is also the spec's query-limit code. */
const CAPACITY_CODES = new Set([429, -32029, -32090, -32097, -32098, -32007, -32012]);

/**
 * Whether a JSON-RPC error object is the provider's own capacity or rate-limit error (so the call should
 * go elsewhere, and the client must never see it as its own quota).
 */
export function isCapacityError(error: { code?: unknown; message?: unknown }, isCallError?: CallErrorTest): boolean {
  const message = typeof error.message === 'string' ? error.message : '';
  // A call's own error (a revert) carries the caller's words, whatever they say.
  if (isCallError?.(error) === true) return false;
  if (CAPACITY_MESSAGE.test(message)) return true;
  return typeof error.code === 'number' && CAPACITY_CODES.has(error.code);
}

/** A provider's capacity error, as found in a reply body. */
export interface CapacityError {
  /** The JSON-RPC error code the provider sent. */
  readonly code: unknown;
  /** Its message. */
  readonly message: unknown;
}

/**
 * The provider capacity error in a small JSON-RPC error body, if it is one; undefined otherwise (and for
 * any body that is large or has no `"error"` member, which is never parsed).
 */
export function capacityErrorOf(body: Uint8Array, isCallError?: CallErrorTest): CapacityError | undefined {
  const found = errorObjectOf(body);
  return found !== undefined && isCapacityError(found, isCallError) ? { code: found.code, message: found.message } : undefined;
}

/** The error object of a small JSON-RPC error body; undefined for a large body or one without an `error` key (never parsed). */
function errorObjectOf(body: Uint8Array): { code?: unknown; message?: unknown } | undefined {
  if (body.byteLength > MAX_ERROR_BODY) return undefined;
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (bytes.indexOf(ERROR_MEMBER) === -1) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
  const error = (parsed as { error?: unknown } | null)?.error;
  if (typeof error !== 'object' || error === null) return undefined;
  return error as { code?: unknown; message?: unknown };
}

/** JSON-RPC 2.0's "method not found": the node does not serve the method (another node may). */
const METHOD_NOT_FOUND = -32601;

/** A family's {@link NetworkFamily.isCallError} test. */
export type CallErrorTest = NonNullable<NetworkFamily['isCallError']>;

/** Whether `protocol` is JSON-RPC over HTTP (so probes may speak it too). */
export function isJsonRpcProtocol(protocol: CallProtocol): boolean {
  return jsonRpcProtocols.has(protocol);
}

/** The families' call-error tests as one (true when any says so), or undefined when none has one. */
export function callErrorTestOf(families: readonly NetworkFamily[]): CallErrorTest | undefined {
  const tests = families.flatMap((f) => (f.isCallError === undefined ? [] : [f.isCallError]));
  if (tests.length === 0) return undefined;
  return tests.length === 1 ? tests[0] : (error) => tests.some((test) => test(error));
}

/**
 * JSON-RPC over HTTP POST. The client's own bytes are forwarded when no stage rewrote the call;
 * notifications are sent with the gateway's call id so the gateway learns whether a node served them.
 *
 * A reply is a failure (tried elsewhere) when the upstream answered HTTP 429 or 5xx, refused the
 * gateway's credentials (401, 403), sent no JSON-RPC body, or sent a provider capacity error (see
 * {@link isCapacityError}). Anything else, a node's error for the call included, is the answer.
 *
 * `isCallError` (the families' test) marks node errors that are the call's own answer, never capacity.
 */
export function createJsonRpcProtocol(isCallError?: CallErrorTest): CallProtocol {
  const protocol = jsonRpcProtocolWith(isCallError);
  jsonRpcProtocols.add(protocol);
  return protocol;
}

function jsonRpcProtocolWith(isCallError: CallErrorTest | undefined): CallProtocol {
  return {
  encode(ctx) {
    const { call } = ctx;
    if (!ctx.rewritten && call.raw !== undefined && call.id !== undefined) return { body: call.raw };
    return { body: encodeRequest(call.id === undefined ? ctx.id : call.id, call.method, ctx.params) };
  },
  inspect(reply) {
    const status = reply.status;
    if (status === 429) {
      return new UpstreamFailure('overloaded', 'upstream answered HTTP 429', { maybeReceived: false, status });
    }
    if (status >= 500) {
      return new UpstreamFailure('status', `upstream answered HTTP ${status}`, { maybeReceived: true, status });
    }
    if (status === 401 || status === 403) {
      return new UpstreamFailure('status', `upstream refused the gateway's credentials (HTTP ${status})`, { maybeReceived: false, status });
    }
    const body = reply.body as Uint8Array;
    const first = firstByte(body);
    if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
      return new UpstreamFailure('bad-response', `upstream answered HTTP ${status} without a JSON-RPC body`, { maybeReceived: true, status });
    }
    const error = errorObjectOf(body);
    if (error === undefined) return undefined;
    if (isCapacityError(error, isCallError)) {
      // The provider refused the call before running it: safe to send elsewhere, even a transaction.
      return new UpstreamFailure('overloaded', `upstream is over capacity: ${String(error.code)} ${String(error.message)}`, { maybeReceived: false, status });
    }
    if (error.code === METHOD_NOT_FOUND) {
      // The node does not serve the method: it ran nothing, and another node may serve it. The message
      // is the node's own, for the client when no node serves the method.
      return new UpstreamFailure('unsupported', typeof error.message === 'string' ? error.message : 'Method not found', { maybeReceived: false, status });
    }
    return undefined;
  },
  batch: jsonRpcBatch,
  };
}

/**
 * Several calls as one JSON-RPC batch: call `i` goes under upstream id `i` (unique within the request,
 * whatever ids the clients chose), and each answer gets its call's own id back (a notification's, the
 * gateway's call id, as when it is sent alone). The answers keep the node's bytes; only the id changes.
 */
const jsonRpcBatch: BatchCodec = {
  encode(calls) {
    return { body: `[${calls.map((ctx, i) => encodeRequest(i, ctx.call.method, ctx.params)).join(',')}]` };
  },
  split(reply, calls) {
    if (!Buffer.isBuffer(reply.body)) return undefined;
    const elements = arrayElements(reply.body);
    if (elements === undefined) return undefined;
    const answers: Array<UpstreamReply | UpstreamFailure | undefined> = calls.map(() => undefined);
    for (const element of elements) {
      const id = memberRange(element, 'id');
      if (id === undefined) continue;
      const index = Number(element.toString('latin1', id.start, id.end));
      if (!Number.isInteger(index) || index < 0 || index >= calls.length || answers[index] !== undefined) continue;
      const body = Buffer.concat([element.subarray(0, id.start), Buffer.from(JSON.stringify(clientId(calls[index]!))), element.subarray(id.end)]);
      answers[index] = { status: reply.status, headers: reply.headers, body };
    }
    return answers.map((answer) => answer ?? new UpstreamFailure('bad-response', 'the upstream\'s batch answer lacks this call', { maybeReceived: true, status: reply.status }));
  },
};

function clientId(ctx: RequestContext): unknown {
  return ctx.call.id === undefined ? ctx.id : ctx.call.id;
}

/** JSON-RPC over HTTP POST without any family's call-error test. */
export const jsonRpcProtocol: CallProtocol = createJsonRpcProtocol();
