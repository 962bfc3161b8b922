/** The longest header block a part may have before the body is called malformed. */
const MAX_PART_HEADERS = 16 * 1024;
const EMPTY = Buffer.alloc(0);

/**
 * Follows a `multipart/form-data` body as its bytes stream past, without holding it: counts its parts and
 * hands each part's body bytes, exactly, to `onBody` (a part starts with `onPart`). The body is searched
 * for the boundary with `Buffer.indexOf`; only the last few bytes of a chunk, which could begin a
 * boundary, wait for the next one.
 */
export class MultipartParts {
  /** Parts begun so far. */
  parts = 0;
  /** Set when the body breaks the multipart framing (the node refuses it anyway). */
  malformed = false;
  readonly #needle: Buffer;
  readonly #onPart: () => void;
  readonly #onBody: (bytes: Buffer) => void;
  #state: 'preamble' | 'after-boundary' | 'headers' | 'body' | 'end' = 'preamble';
  // Bytes that could begin a boundary; the first boundary has no CRLF before it, so one is assumed.
  #tail: Buffer = Buffer.from('\r\n');
  #afterBoundary: number[] = [];
  #headerBytes = 0;
  #lastFour = 0;

  constructor(boundary: string, onPart: () => void, onBody: (bytes: Buffer) => void) {
    this.#needle = Buffer.from(`\r\n--${boundary}`);
    this.#onPart = onPart;
    this.#onBody = onBody;
  }

  /** Feeds the next bytes of the body. */
  push(chunk: Buffer): void {
    let rest = chunk;
    while (rest.length > 0 && this.#state !== 'end') {
      if (this.#state === 'preamble' || this.#state === 'body') rest = this.#scan(rest);
      else if (this.#state === 'after-boundary') rest = this.#readAfterBoundary(rest);
      else rest = this.#readHeaders(rest);
    }
  }

  #emit(bytes: Buffer): void {
    if (this.#state === 'body' && bytes.length > 0) this.#onBody(bytes);
  }

  /** Body (or preamble) bytes up to the next boundary; returns what follows the boundary. */
  #scan(chunk: Buffer): Buffer {
    const needle = this.#needle;
    const tail = this.#tail;
    if (tail.length > 0) {
      const probe = Buffer.concat([tail, chunk.subarray(0, needle.length - 1)]);
      const at = probe.indexOf(needle);
      if (at !== -1 && at < tail.length) {
        this.#emit(tail.subarray(0, at));
        this.#tail = EMPTY;
        this.#boundary();
        return chunk.subarray(at + needle.length - tail.length);
      }
      if (chunk.length < needle.length - 1) {
        // A short chunk: the probe holds all of it, and its last bytes may still begin a boundary.
        const keep = Math.min(needle.length - 1, probe.length);
        this.#emit(probe.subarray(0, probe.length - keep));
        this.#tail = Buffer.from(probe.subarray(probe.length - keep));
        return EMPTY;
      }
      this.#emit(tail);
      this.#tail = EMPTY;
    }
    const at = chunk.indexOf(needle);
    if (at !== -1) {
      this.#emit(chunk.subarray(0, at));
      this.#boundary();
      return chunk.subarray(at + needle.length);
    }
    const keep = Math.min(needle.length - 1, chunk.length);
    this.#emit(chunk.subarray(0, chunk.length - keep));
    this.#tail = Buffer.from(chunk.subarray(chunk.length - keep));
    return EMPTY;
  }

  #boundary(): void {
    this.#state = 'after-boundary';
    this.#afterBoundary = [];
  }

  /** `--` closes the body; anything else up to the line's end (transport padding) precedes a part's headers. */
  #readAfterBoundary(chunk: Buffer): Buffer {
    let i = 0;
    while (i < chunk.length) {
      const byte = chunk[i++]!;
      this.#afterBoundary.push(byte);
      const seen = this.#afterBoundary;
      if (seen.length === 2 && seen[0] === 0x2d && seen[1] === 0x2d) {
        this.#state = 'end';
        return EMPTY;
      }
      if (byte === 0x0a) {
        this.#state = 'headers';
        this.#headerBytes = 0;
        this.#lastFour = 0x0d0a; // the CRLF just read: an empty header block ends at the next CRLF
        return chunk.subarray(i);
      }
      if (seen.length > 256) return this.#fail();
    }
    return EMPTY;
  }

  /** A part's headers, up to the blank line; then its body begins. */
  #readHeaders(chunk: Buffer): Buffer {
    let i = 0;
    while (i < chunk.length) {
      this.#lastFour = ((this.#lastFour << 8) | chunk[i++]!) >>> 0;
      if (++this.#headerBytes > MAX_PART_HEADERS) return this.#fail();
      if (this.#lastFour === 0x0d0a0d0a) {
        this.parts++;
        this.#state = 'body';
        this.#onPart();
        return chunk.subarray(i);
      }
    }
    return EMPTY;
  }

  #fail(): Buffer {
    this.malformed = true;
    this.#state = 'end';
    return EMPTY;
  }
}
