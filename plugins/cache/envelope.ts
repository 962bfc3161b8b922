import { objectMembers } from '../../core/transport-api.js';
import { type JsonRpcId } from '../../core/plugin-api.js';

/** The answer part of a node's JSON-RPC response: which member it was, and its exact bytes. */
export interface AnswerMember {
  /** `result` for an answer, `error` for the node's error. */
  readonly kind: 'result' | 'error';
  /** The member's value, byte for byte as the node sent it (numbers beyond 2^53 included). */
  readonly bytes: Buffer;
}

/**
 * Finds the top-level `result` or `error` member of a single JSON-RPC response without re-encoding it,
 * so the cached bytes are the node's own; undefined for a body that is not one response object.
 */
export function answerMember(body: Buffer): AnswerMember | undefined {
  const members = objectMembers(body);
  const member = members?.find((m) => m.name === 'result' || m.name === 'error');
  if (member === undefined) return undefined;
  return { kind: member.name as 'result' | 'error', bytes: body.subarray(member.start, member.end) };
}

const HEAD = Buffer.from('{"jsonrpc":"2.0","id":');
const RESULT = Buffer.from(',"result":');
const ERROR = Buffer.from(',"error":');
const TAIL = Buffer.from('}');

/** A response envelope for the client's `id` around answer bytes from the cache or from another call. */
export function envelope(id: JsonRpcId | undefined, kind: 'result' | 'error', bytes: Uint8Array): Buffer {
  return Buffer.concat([HEAD, Buffer.from(JSON.stringify(id ?? null)), kind === 'result' ? RESULT : ERROR, bytes, TAIL]);
}
