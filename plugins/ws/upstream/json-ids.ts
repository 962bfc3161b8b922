// Finds and replaces the `id` of JSON-RPC messages in their bytes, without parsing them: a call's bytes
// go to the node and its answer's bytes back to the client as they came, only the id changes.
import { memberRange } from '../../../core/transport-api.js';

/** Where a member's value lies in a message's bytes. */
export interface ValueRange {
  /** Index of the value's first byte. */
  readonly start: number;
  /** Index just past its last byte. */
  readonly end: number;
}

/**
 * Where the value of the top-level `id` member of the JSON object in `body` lies; undefined when it is
 * not an object or has no `id`. With `notifications`, a `method` member before any `id` ends the search
 * with undefined too: a node's message that names a method is a notification, never an answer.
 */
export function idRange(body: Buffer, notifications = false): ValueRange | undefined {
  return memberRange(body, 'id', notifications ? 'method' : undefined);
}

/** The integer written at `range` of `body`, or -1 when it is not a non-negative integer. */
export function integerAt(body: Buffer, range: ValueRange): number {
  let value = 0;
  if (range.end <= range.start || range.end - range.start > 15) return -1;
  for (let i = range.start; i < range.end; i++) {
    const digit = body[i]! - 0x30;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

/** `body` with the bytes at `range` replaced by `value` (bytes, or latin1 text: an id's digits). */
export function replaceAt(body: Buffer, range: ValueRange, value: Buffer | string): Buffer {
  const length = value.length;
  const out = Buffer.allocUnsafe(body.length - (range.end - range.start) + length);
  body.copy(out, 0, 0, range.start);
  if (typeof value === 'string') out.write(value, range.start, 'latin1');
  else value.copy(out, range.start);
  body.copy(out, range.start + length, range.end);
  return out;
}
