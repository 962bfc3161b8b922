// Finds values inside JSON bytes without parsing them, so a node's bytes can be passed on as they came
// (numbers beyond 2^53 included).

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN = new Set([OPEN_OBJECT, OPEN_ARRAY]);
const CLOSE = new Set([0x7d, CLOSE_ARRAY]);

function isSpace(byte: number | undefined): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

function skipSpace(body: Buffer, at: number): number {
  while (at < body.length && isSpace(body[at])) at++;
  return at;
}

/** Index just past the JSON string that starts at `at` (a quote); -1 when it does not end. */
export function skipString(body: Buffer, at: number): number {
  for (let i = at + 1; i < body.length; i++) {
    const byte = body[i]!;
    if (byte === BACKSLASH) i++;
    else if (byte === QUOTE) return i + 1;
  }
  return -1;
}

/** Index just past the JSON value that starts at `at`, at the same nesting depth; -1 when it does not end. */
export function skipValue(body: Buffer, at: number): number {
  let depth = 0;
  for (let i = at; i < body.length; i++) {
    const byte = body[i]!;
    if (byte === QUOTE) {
      i = skipString(body, i) - 1;
      if (i < 0) return -1;
      if (depth === 0) return i + 1;
    } else if (OPEN.has(byte)) depth++;
    else if (CLOSE.has(byte)) {
      if (depth === 0) return i;
      if (--depth === 0) return i + 1;
    } else if (byte === COMMA && depth === 0) return i;
  }
  return depth === 0 ? body.length : -1;
}

/** A top-level member of a JSON object: its name and where its value lies in the object's bytes. */
export interface JsonMember {
  /** The member's name. */
  readonly name: string;
  /** Index of the value's first byte. */
  readonly start: number;
  /** Index just past the value's last byte. */
  readonly end: number;
}

/**
 * Walks the top-level members of the JSON object in `body`, in order, handing each one's name bytes
 * (`keyStart` is its opening quote, `keyEnd` just past its closing one) and value to `visit`, which
 * returns true to stop there. False when `body` is not one well-formed object.
 */
function eachMember(body: Buffer, visit: (keyStart: number, keyEnd: number, start: number, end: number) => boolean): boolean {
  let i = skipSpace(body, 0);
  if (body[i] !== OPEN_OBJECT) return false;
  i++;
  while (i < body.length) {
    const keyStart = body.indexOf(QUOTE, i);
    if (keyStart === -1) return true;
    const keyEnd = skipString(body, keyStart);
    if (keyEnd === -1) return false;
    const colon = body.indexOf(COLON, keyEnd);
    if (colon === -1) return false;
    const start = skipSpace(body, colon + 1);
    const end = skipValue(body, start);
    if (end === -1) return false;
    if (visit(keyStart, keyEnd, start, end)) return true;
    i = end + 1;
  }
  return true;
}

/** The top-level members of the JSON object in `body`, in order; undefined when it is not one object. */
export function objectMembers(body: Buffer): JsonMember[] | undefined {
  const members: JsonMember[] = [];
  const ok = eachMember(body, (keyStart, keyEnd, start, end) => {
    members.push({ name: body.toString('utf8', keyStart + 1, keyEnd - 1), start, end });
    return false;
  });
  return ok ? members : undefined;
}

/**
 * The top-level member `name` of the JSON object in `body`, without building the other members' names;
 * undefined when it is absent, when `body` is not an object, or when a member named `before` comes first
 * (a node's message that names a `method` before any `id` is a notification, never an answer).
 */
export function memberRange(body: Buffer, name: string, before?: string): JsonMember | undefined {
  let found: JsonMember | undefined;
  const named = (keyStart: number, keyEnd: number, wanted: string): boolean =>
    keyEnd - keyStart === wanted.length + 2 && body.toString('latin1', keyStart + 1, keyEnd - 1) === wanted;
  eachMember(body, (keyStart, keyEnd, start, end) => {
    if (named(keyStart, keyEnd, name)) {
      found = { name, start, end };
      return true;
    }
    return before !== undefined && named(keyStart, keyEnd, before);
  });
  return found;
}

/** The elements of the top-level JSON array in `body`, each as a view on its bytes; undefined when it is not an array. */
export function arrayElements(body: Buffer): Buffer[] | undefined {
  let i = skipSpace(body, 0);
  if (body[i] !== OPEN_ARRAY) return undefined;
  i = skipSpace(body, i + 1);
  const elements: Buffer[] = [];
  if (body[i] === CLOSE_ARRAY) return elements;
  while (i < body.length) {
    const end = skipValue(body, i);
    if (end === -1) return undefined;
    elements.push(body.subarray(i, end));
    i = skipSpace(body, end);
    if (body[i] === CLOSE_ARRAY) return elements;
    if (body[i] !== COMMA) return undefined;
    i = skipSpace(body, i + 1);
  }
  return undefined;
}
