// Follows a path of members through JSON bytes without building the document: a block of 120 hashes
// read for its `number` costs a walk over its member names, not 120 strings and an object for the GC.
//
// The bytes are read as a latin1 string (one byte, one char: a copy, no decoding) so that the inside of
// a string is crossed with String#indexOf, which runs natively: a JavaScript loop over every byte costs
// more than JSON.parse itself (measured: about 3x on a block of 120 hashes). Everything between strings
// (brackets, colons, commas, numbers, literals, space) is checked as JSON.parse checks it, and so are the
// escapes of every string that has one (found with one native search for backslashes). What is not
// checked, to keep the native crossing, is a raw control character (U+0000..U+001F) inside a string
// without escapes: bytes JSON.parse refuses for that alone may be read. Everything else JSON.parse
// refuses makes the scanner decline (undefined): the caller then parses. On bytes JSON.parse accepts,
// what the scanner gives back is what JSON.parse gives: the last of duplicate names, escapes in names
// decoded, the value itself read with JSON.parse. A scan made `upToMember` reads a member from the bytes
// before it and only searches the rest (see MemberScan.memberUpTo): the same on JSON, but bytes JSON.parse
// refuses after the member are not seen.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;

/** Where a value lies in the text: its first char, and just past its last. */
export interface TextRange {
  /** Index of the value's first char. */
  readonly start: number;
  /** Index just past the value's last char. */
  readonly end: number;
}

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

function skipSpace(text: string, at: number): number {
  while (at < text.length && isSpace(text.charCodeAt(at))) at++;
  return at;
}

function isDigit(code: number): boolean {
  return code >= ZERO && code <= NINE;
}

function isHex(code: number): boolean {
  return isDigit(code) || (code >= 0x41 && code <= 0x46) || (code >= 0x61 && code <= 0x66);
}

/** Index just past the number at `at`, by JSON's grammar; -1 when it is not one. */
function skipNumber(text: string, at: number): number {
  let i = at;
  if (text.charCodeAt(i) === MINUS) i++;
  if (text.charCodeAt(i) === ZERO) i++;
  else if (isDigit(text.charCodeAt(i))) while (isDigit(text.charCodeAt(i))) i++;
  else return -1;
  if (text.charCodeAt(i) === DOT) {
    i++;
    if (!isDigit(text.charCodeAt(i))) return -1;
    while (isDigit(text.charCodeAt(i))) i++;
  }
  const e = text.charCodeAt(i);
  if (e === 0x65 || e === 0x45) {
    i++;
    const sign = text.charCodeAt(i);
    if (sign === PLUS || sign === MINUS) i++;
    if (!isDigit(text.charCodeAt(i))) return -1;
    while (isDigit(text.charCodeAt(i))) i++;
  }
  return i;
}

/** Index just past the scalar (number, `true`, `false`, `null`) at `at`; -1 when it is none. */
function skipScalar(text: string, at: number): number {
  const first = text.charCodeAt(at);
  if (first === 0x74) return text.startsWith('true', at) ? at + 4 : -1;
  if (first === 0x66) return text.startsWith('false', at) ? at + 5 : -1;
  if (first === 0x6e) return text.startsWith('null', at) ? at + 4 : -1;
  return skipNumber(text, at);
}

/** The escapes JSON allows after a backslash, other than `u`: `" \ / b f n r t`. */
function isSimpleEscape(code: number): boolean {
  return code === QUOTE || code === BACKSLASH || code === 0x2f || code === 0x62 || code === 0x66 || code === 0x6e || code === 0x72 || code === 0x74;
}

/** Index just past the string at `at` read char by char, its escapes and control chars checked; -1 when malformed. */
function skipEscapedString(text: string, at: number): number {
  for (let i = at + 1; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) return i + 1;
    if (code < 0x20) return -1;
    if (code === BACKSLASH) {
      const next = text.charCodeAt(i + 1);
      if (next === 0x75) {
        if (!isHex(text.charCodeAt(i + 2)) || !isHex(text.charCodeAt(i + 3)) || !isHex(text.charCodeAt(i + 4)) || !isHex(text.charCodeAt(i + 5))) return -1;
        i += 5;
      } else if (isSimpleEscape(next)) i++;
      else return -1;
    }
  }
  return -1;
}

/** A walk over one text: the text, and where its next backslash is (searched once, natively, as the walk passes it). */
class Text {
  /** Index of the first backslash at or after {@link from}; the text's length when none is left. */
  private slash = -1;
  /** Where {@link slash} was searched from (a later read may go back to an earlier value). */
  private from = 0;

  /** @param text the bytes as latin1 */
  constructor(readonly text: string) {}

  /** Index just past the string whose opening quote is at `at`; -1 when it is malformed or does not end. */
  skipString(at: number): number {
    const text = this.text;
    const quote = text.indexOf('"', at + 1);
    if (quote === -1) return -1;
    if (this.slash < at || at < this.from) {
      const slash = text.indexOf('\\', at);
      this.slash = slash === -1 ? text.length : slash;
      this.from = at;
    }
    // A string without a backslash ends at the next quote; one with escapes is read char by char.
    return this.slash < quote ? skipEscapedString(text, at) : quote + 1;
  }

  /** Index just past the object key at `at`, its colon and the space after it: where the member's value starts; -1 when malformed. */
  private skipKey(at: number): number {
    if (this.text.charCodeAt(at) !== QUOTE) return -1;
    const end = this.skipString(at);
    if (end === -1) return -1;
    const colon = skipSpace(this.text, end);
    return this.text.charCodeAt(colon) === COLON ? skipSpace(this.text, colon + 1) : -1;
  }

  /** Index just past the value at `at` (no space before it), checked as JSON; -1 when it is malformed or does not end. */
  skipValue(at: number): number {
    const text = this.text;
    const first = text.charCodeAt(at);
    if (first === QUOTE) return this.skipString(at);
    if (first !== OPEN_OBJECT && first !== OPEN_ARRAY) return skipScalar(text, at);
    // The closing char each open container expects, innermost last.
    const closers: number[] = [];
    let i = at;
    for (;;) {
      // A value starts at i.
      const code = text.charCodeAt(i);
      if (code === QUOTE) i = this.skipString(i);
      else if (code === OPEN_OBJECT) {
        const inside = skipSpace(text, i + 1);
        if (text.charCodeAt(inside) === CLOSE_OBJECT) i = inside + 1;
        else {
          closers.push(CLOSE_OBJECT);
          i = this.skipKey(inside);
          if (i === -1) return -1;
          continue;
        }
      } else if (code === OPEN_ARRAY) {
        const inside = skipSpace(text, i + 1);
        if (text.charCodeAt(inside) === CLOSE_ARRAY) i = inside + 1;
        else {
          closers.push(CLOSE_ARRAY);
          i = inside;
          continue;
        }
      } else i = skipScalar(text, i);
      if (i === -1) return -1;
      // A value ended at i: close containers until a comma starts the next value.
      for (;;) {
        if (closers.length === 0) return i;
        i = skipSpace(text, i);
        const next = text.charCodeAt(i);
        const closer = closers[closers.length - 1]!;
        if (next === COMMA) {
          i = skipSpace(text, i + 1);
          if (closer === CLOSE_OBJECT) i = this.skipKey(i);
          if (i === -1) return -1;
          break;
        }
        if (next !== closer) return -1;
        closers.pop();
        i++;
      }
    }
  }

  /** The members of the object at `at`, one call per member; index just past the object, or -1 when it is malformed. */
  eachMember(at: number, visit: (keyStart: number, keyEnd: number, value: TextRange) => void): number {
    const text = this.text;
    let i = skipSpace(text, at + 1);
    if (text.charCodeAt(i) === CLOSE_OBJECT) return i + 1;
    for (;;) {
      if (text.charCodeAt(i) !== QUOTE) return -1;
      const keyEnd = this.skipString(i);
      if (keyEnd === -1) return -1;
      const colon = skipSpace(text, keyEnd);
      if (text.charCodeAt(colon) !== COLON) return -1;
      const start = skipSpace(text, colon + 1);
      const end = this.skipValue(start);
      if (end === -1) return -1;
      visit(i, keyEnd, { start, end });
      i = skipSpace(text, end);
      const next = text.charCodeAt(i);
      if (next === CLOSE_OBJECT) return i + 1;
      if (next !== COMMA) return -1;
      i = skipSpace(text, i + 1);
    }
  }
}

/** Whether the key at `keyStart..keyEnd` (quotes included) must be decoded to be read: an escape, a control or a non-ASCII char. */
function needsDecoding(text: string, keyStart: number, keyEnd: number): boolean {
  for (let i = keyStart + 1; i < keyEnd - 1; i++) {
    const code = text.charCodeAt(i);
    if (code === BACKSLASH || code < 0x20 || code >= 0x80) return true;
  }
  return false;
}

/** The name of the key at `keyStart..keyEnd` (quotes included), decoded as JSON.parse would; undefined when malformed. */
function keyName(text: string, keyStart: number, keyEnd: number): string | undefined {
  if (!needsDecoding(text, keyStart, keyEnd)) return text.slice(keyStart + 1, keyEnd - 1);
  try {
    return JSON.parse(Buffer.from(text.slice(keyStart, keyEnd), 'latin1').toString('utf8')) as string;
  } catch {
    return undefined;
  }
}

/**
 * Whether the key at `keyStart..keyEnd` (quotes included) names `name` once decoded as JSON.parse
 * would; undefined when the key is malformed.
 */
function keyIs(text: string, keyStart: number, keyEnd: number, name: string): boolean | undefined {
  if (!needsDecoding(text, keyStart, keyEnd)) return keyEnd - keyStart - 2 === name.length && text.startsWith(name, keyStart + 1);
  const decoded = keyName(text, keyStart, keyEnd);
  return decoded === undefined ? undefined : decoded === name;
}

/** A member of a walked object: where its key lies (quotes included), and its value. */
interface ScannedMember {
  /** Index of the key's opening quote. */
  readonly keyStart: number;
  /** Index just past the key's closing quote. */
  readonly keyEnd: number;
  /** The member's value. */
  readonly value: ScannedValue;
}

/** A value found in the text: where it lies and, for an object walked member by member, its members. */
interface ScannedValue extends TextRange {
  /**
   * The members in order, set for objects the scan walked. Their names are compared where they lie
   * when asked for, not cut out and hashed into a map: an answer's `result` has some thirty members
   * and a hook asks for one.
   */
  readonly members?: readonly ScannedMember[];
  /** The number of elements; set for arrays the scan walked (counted while skipping them: no second pass). */
  readonly count?: number;
}

/**
 * How deep objects are walked member by member on the first read: the document, the objects in its
 * members (an answer's `result`) and theirs (a `result.context`), so `result.number` or
 * `result.context.slot` costs one pass over the bytes, not two. Arrays down to that depth are counted
 * as they are skipped (a `result` of logs), deeper ones skipped whole.
 */
const WALKED_DEPTH = 3;

const ERROR_NAME: readonly string[] = ['error'];

/** Whether the key at `keyStart..keyEnd` (quotes included, no escape in it) is `name`. */
function isKey(text: string, keyStart: number, keyEnd: number, name: string): boolean {
  return keyEnd - keyStart - 2 === name.length && text.startsWith(name, keyStart + 1);
}

/**
 * Where the value of the first `name` key of the object at `at` starts, its members walked up to it
 * (keys checked, the values before it skipped and checked as JSON); -1 when that cannot settle it: the
 * object ends first, a key holds an escape, a `refuse` key comes first, or the bytes are malformed.
 */
function firstValueOf(walker: Text, at: number, name: string, refuse?: string): number {
  const text = walker.text;
  if (text.charCodeAt(at) !== OPEN_OBJECT) return -1;
  let i = skipSpace(text, at + 1);
  for (;;) {
    if (text.charCodeAt(i) !== QUOTE) return -1;
    const keyEnd = walker.skipString(i);
    if (keyEnd === -1 || needsDecoding(text, i, keyEnd)) return -1;
    const colon = skipSpace(text, keyEnd);
    if (text.charCodeAt(colon) !== COLON) return -1;
    const value = skipSpace(text, colon + 1);
    if (isKey(text, i, keyEnd, name)) return value;
    if (refuse !== undefined && isKey(text, i, keyEnd, refuse)) return -1;
    const end = walker.skipValue(value);
    if (end === -1) return -1;
    i = skipSpace(text, end);
    if (text.charCodeAt(i) !== COMMA) return -1;
    i = skipSpace(text, i + 1);
  }
}

/** How much of an answer a read up to a member copies first: a block's `number`, a `context.slot`, lie well inside. */
const HEAD_BYTES = 2048;

/** Hex digits, `x` and the quote: the chars a node's answer is mostly made of. */
const COMMON_CHARS = /^[0-9a-fA-Fx"]/;

/**
 * What to search for to learn whether `name` is spelled as a key anywhere: the key's tail, from its first
 * char that is rare in answers (`number"`, `rror"` for `error`), since a native search runs fastest on a
 * rare first char and a hex-heavy answer holds the common ones everywhere. Every key spelling holds it;
 * a string that merely contains it only sends the read to the whole walk.
 */
export function keyAnchor(name: string): Buffer {
  let anchor = anchors.get(name);
  if (anchor === undefined) {
    // As bytes: a string needle is encoded again on every search.
    anchor = Buffer.from(anchorOf(name), 'utf8');
    if (anchors.size < 1024) anchors.set(name, anchor);
  }
  return anchor;
}

const anchors = new Map<string, Buffer>();

function anchorOf(name: string): string {
  const quoted = `${name}"`;
  let from = 0;
  while (from < quoted.length - 1 && COMMON_CHARS.test(quoted[from]!)) from++;
  return from === quoted.length - 1 ? `"${quoted}` : quoted.slice(from);
}

/** Values this short are checked for non-ASCII chars before parsing; a longer one is decoded from UTF-8 without looking. */
const SHORT_VALUE = 256;

/** A value's text (its bytes as latin1), parsed from its UTF-8 (an ASCII value, the usual scalar, is its own text). */
function parseValue(slice: string): unknown {
  if (slice.length <= SHORT_VALUE) {
    let ascii = true;
    for (let i = 0; i < slice.length && ascii; i++) ascii = slice.charCodeAt(i) < 0x80;
    if (ascii) return JSON.parse(slice) as unknown;
  }
  return JSON.parse(Buffer.from(slice, 'latin1').toString('utf8')) as unknown;
}

/**
 * A JSON document's text (its bytes as latin1), read member by member. Every method answers undefined
 * when the scanner declines; the caller then parses.
 */
export class MemberScan {
  private readonly bytes: Buffer;
  private readonly upToMember: boolean;
  private root: ScannedValue | undefined | null = null;
  /** The whole text, made on first need: a read up to a member near the start reads only the head. */
  private whole: Text | undefined;
  private head: Text | undefined;
  /** The bytes from here on hold no backslash (searched once). */
  private slashFreeFrom = Number.POSITIVE_INFINITY;

  /**
   * @param body the document's bytes
   * @param options `upToMember`: a read of a member checks the bytes up to the member's end, and only
   *   searches the rest for anything that could replace it (see {@link MemberScan.find}); default false,
   *   every read checks the whole document
   */
  constructor(body: Uint8Array, options: { readonly upToMember?: boolean } = {}) {
    const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    this.bytes = bytes;
    this.upToMember = options.upToMember === true;
  }

  private get walker(): Text {
    return (this.whole ??= new Text(this.bytes.toString('latin1')));
  }

  private get text(): string {
    return this.walker.text;
  }

  /**
   * Runs a read up to a member on the first {@link HEAD_BYTES} bytes, and on the whole text when it
   * reached past them: a read of a head answers from the start of an answer without copying the rest.
   */
  private upTo<T>(read: (walker: Text, complete: boolean) => T | undefined): T | undefined {
    if (this.whole === undefined && this.bytes.length > HEAD_BYTES) {
      this.head ??= new Text(this.bytes.toString('latin1', 0, HEAD_BYTES));
      const found = read(this.head, false);
      if (found !== undefined) return found;
    }
    return read(this.walker, true);
  }

  /**
   * The member at `path` read from the bytes before it, or undefined when that cannot settle it (the
   * whole walk then does). The walk stops at the member: the keys before it are checked and their values
   * skipped (checked as JSON, as far as they go), the member's value is checked, and the rest is only
   * searched natively: with no backslash left (no escaped name) and no later spelling of any name on the
   * path (`number"`), no later member can replace the one found, as JSON.parse's last duplicate would.
   * A malformed tail is not seen. An absent member, a key with an escape and a step that is not an
   * object all leave it to the whole walk.
   */
  private memberUpTo(path: readonly string[]): TextRange | undefined {
    return this.upTo((walker, complete) => this.memberIn(walker, complete, path));
  }

  private memberIn(walker: Text, complete: boolean, path: readonly string[]): TextRange | undefined {
    const text = walker.text;
    let at = skipSpace(text, 0);
    for (const name of path) {
      at = firstValueOf(walker, at, name);
      if (at === -1) return undefined;
    }
    const end = walker.skipValue(at);
    // A number cut by the head's end would look whole: what ends at the head's end is read again whole.
    if (end === -1 || (!complete && end >= text.length) || !this.noneAfter(path, end)) return undefined;
    return { start: at, end };
  }

  /** Whether the bytes from `from` on hold no backslash and no spelling of any of `names` as a key. */
  private noneAfter(names: readonly string[], from: number): boolean {
    const bytes = this.bytes;
    if (from < this.slashFreeFrom) {
      if (bytes.indexOf(BACKSLASH, from) !== -1) return false;
      this.slashFreeFrom = from;
    }
    for (const name of names) if (bytes.indexOf(keyAnchor(name), from) !== -1) return false;
    return true;
  }

  /**
   * Where the value of the document's `result` lies, when the document is an object whose `result` key
   * comes before any `error` key and no `error` key follows it, read as {@link memberUpTo} reads
   * (`result`'s value itself is not crossed); undefined when that cannot settle it.
   */
  resultUpTo(): number | undefined {
    if (!this.upToMember) return undefined;
    return this.upTo((walker) => this.resultIn(walker));
  }

  private resultIn(walker: Text): number | undefined {
    const value = firstValueOf(walker, skipSpace(walker.text, 0), 'result', 'error');
    return value !== -1 && value < walker.text.length && this.noneAfter(ERROR_NAME, value) ? value : undefined;
  }

  /** The value at `start`, objects walked member by member down to `depth` {@link WALKED_DEPTH}; undefined when malformed. */
  private walk(start: number, depth: number): ScannedValue | undefined {
    const text = this.text;
    const first = text.charCodeAt(start);
    if (depth < WALKED_DEPTH && first === OPEN_ARRAY) return this.countArray(start);
    if (depth >= WALKED_DEPTH || first !== OPEN_OBJECT) {
      const end = this.walker.skipValue(start);
      return end === -1 ? undefined : { start, end };
    }
    const members: ScannedMember[] = [];
    let i = skipSpace(text, start + 1);
    if (text.charCodeAt(i) === CLOSE_OBJECT) return { start, end: i + 1, members };
    for (;;) {
      if (text.charCodeAt(i) !== QUOTE) return undefined;
      const keyStart = i;
      const keyEnd = this.walker.skipString(i);
      if (keyEnd === -1) return undefined;
      // A key that must be decoded is decoded once here, so a malformed one makes the scan decline.
      if (needsDecoding(text, keyStart, keyEnd) && keyName(text, keyStart, keyEnd) === undefined) return undefined;
      const colon = skipSpace(text, keyEnd);
      if (text.charCodeAt(colon) !== COLON) return undefined;
      const value = this.walk(skipSpace(text, colon + 1), depth + 1);
      if (value === undefined) return undefined;
      members.push({ keyStart, keyEnd, value });
      i = skipSpace(text, value.end);
      const next = text.charCodeAt(i);
      if (next === CLOSE_OBJECT) return { start, end: i + 1, members };
      if (next !== COMMA) return undefined;
      i = skipSpace(text, i + 1);
    }
  }

  /** The document's one value, when nothing but space surrounds it and it is well formed as far as walked; cached. */
  private document(): ScannedValue | undefined {
    if (this.root === null) {
      const root = this.walk(skipSpace(this.text, 0), 0);
      this.root = root === undefined || skipSpace(this.text, root.end) !== this.text.length ? undefined : root;
    }
    return this.root;
  }

  /**
   * Where the value at `path` lies: `{ found: range }`, `{ found: undefined }` when some step is not an
   * object or has no such member (as reading the parsed document would give), or undefined when the
   * scanner declines.
   */
  find(path: readonly string[]): { readonly found: TextRange | undefined } | undefined {
    if (this.upToMember && path.length > 0) {
      const found = this.memberUpTo(path);
      if (found !== undefined) return { found };
    }
    let value = this.document();
    if (value === undefined) return undefined;
    for (const name of path) {
      if (this.text.charCodeAt(value.start) !== OPEN_OBJECT) return { found: undefined };
      if (value.members !== undefined) {
        // The last member of that name, as JSON.parse keeps.
        const members: readonly ScannedMember[] = value.members;
        value = undefined;
        for (let k = members.length - 1; k >= 0 && value === undefined; k--) {
          const member: ScannedMember = members[k]!;
          if (keyIs(this.text, member.keyStart, member.keyEnd, name) === true) value = member.value;
        }
      } else {
        let last: TextRange | undefined;
        let malformed = false;
        const end = this.walker.eachMember(value.start, (keyStart, keyEnd, member) => {
          const named = keyIs(this.text, keyStart, keyEnd, name);
          if (named === undefined) malformed = true;
          else if (named) last = member;
        });
        if (end !== value.end || malformed) return undefined;
        value = last;
      }
      if (value === undefined) return { found: undefined };
    }
    return { found: value };
  }

  /**
   * The value at `path`, parsed: `{ value }` (undefined when absent), or undefined when the scanner
   * declines (the value itself malformed included).
   */
  value(path: readonly string[]): { readonly value: unknown } | undefined {
    const at = this.find(path);
    if (at === undefined) return undefined;
    if (at.found === undefined) return { value: undefined };
    try {
      const { start, end } = at.found;
      // A value read from the head is cut from the bytes, so the whole text is not made for it.
      return { value: parseValue(this.whole === undefined ? this.bytes.toString('latin1', start, end) : this.text.slice(start, end)) };
    } catch {
      return undefined;
    }
  }

  /**
   * The number of elements of the array at `path`: `{ length }` (undefined when the value is absent or
   * not an array), or undefined when the scanner declines.
   */
  length(path: readonly string[]): { readonly length: number | undefined } | undefined {
    const at = this.find(path);
    if (at === undefined) return undefined;
    const range = at.found;
    if (range === undefined || this.text.charCodeAt(range.start) !== OPEN_ARRAY) return { length: undefined };
    const counted = (range as ScannedValue).count ?? this.countArray(range.start)?.count;
    return counted === undefined ? undefined : { length: counted };
  }

  /** The array at `start`, skipped element by element and counted; undefined when malformed. */
  private countArray(start: number): ScannedValue | undefined {
    const text = this.text;
    let i = skipSpace(text, start + 1);
    if (text.charCodeAt(i) === CLOSE_ARRAY) return { start, end: i + 1, count: 0 };
    let count = 0;
    for (;;) {
      const end = this.walker.skipValue(i);
      if (end === -1) return undefined;
      count++;
      i = skipSpace(text, end);
      const next = text.charCodeAt(i);
      if (next === CLOSE_ARRAY) return { start, end: i + 1, count };
      if (next !== COMMA) return undefined;
      i = skipSpace(text, i + 1);
    }
  }
}
