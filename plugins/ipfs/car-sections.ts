/**
 * Counts the blocks of a CAR file as its bytes stream past, without holding them: a CARv1 is a
 * varint-prefixed header and then varint-prefixed sections, one block each (its CID and its bytes); a
 * CARv2 is a fixed header that points at a CARv1 payload, followed by an index that holds no blocks.
 * Only lengths are read, so memory stays a few bytes whatever the file's size.
 */
export class CarSections {
  /** Blocks seen so far. */
  blocks = 0;
  /** Set when the bytes are not a CAR this counter understands (the node refuses them anyway). */
  malformed = false;
  #state: 'length' | 'skip' | 'v2-header' | 'done' = 'length';
  #varint = 0;
  #shift = 0;
  #skip = 0;
  // The next length read is a CAR header's (the file's, or a CARv2 payload's), not a block's.
  #nextIsHeader = true;
  // The file's own header is kept (a few bytes) to tell the CARv2 pragma; undefined once read.
  #header: number[] | undefined;
  #v2: number[] = [];
  #offset = 0;
  // Where a CARv2's payload ends: its index, after it, holds no blocks.
  #payloadEnd = Number.POSITIVE_INFINITY;
  #firstHeader = true;

  /** Feeds the next bytes of the file. */
  push(chunk: Uint8Array): void {
    let i = 0;
    while (i < chunk.length && this.#state !== 'done') {
      if (this.#offset >= this.#payloadEnd) {
        this.#state = 'done';
        break;
      }
      if (this.#state === 'skip') {
        const take = Math.min(this.#skip, chunk.length - i, this.#payloadEnd - this.#offset);
        if (this.#header !== undefined) for (let k = 0; k < take; k++) this.#header.push(chunk[i + k]!);
        i += take;
        this.#offset += take;
        this.#skip -= take;
        if (this.#skip === 0) this.#skipped();
        continue;
      }
      const byte = chunk[i]!;
      i++;
      this.#offset++;
      if (this.#state === 'v2-header') {
        this.#v2.push(byte);
        if (this.#v2.length === 40) this.#startPayload();
        continue;
      }
      this.#varint += (byte & 0x7f) * 2 ** this.#shift;
      this.#shift += 7;
      if (byte & 0x80) {
        if (this.#shift > 49) this.#fail();
        continue;
      }
      const length = this.#varint;
      this.#varint = 0;
      this.#shift = 0;
      this.#section(length);
    }
  }

  #section(length: number): void {
    if (this.#nextIsHeader) {
      this.#nextIsHeader = false;
      if (this.#firstHeader) this.#header = [];
      this.#firstHeader = false;
    } else if (length === 0) {
      return this.#fail();
    } else {
      this.blocks++;
    }
    this.#skip = length;
    this.#state = 'skip';
    if (length === 0) this.#skipped();
  }

  #skipped(): void {
    this.#state = 'length';
    const header = this.#header;
    if (header === undefined) return;
    this.#header = undefined;
    // The CARv2 pragma is the dag-cbor map {version: 2}: a1 67 "version" 02.
    if (header.length === 10 && header[0] === 0xa1 && header[1] === 0x67 && header[9] === 2) this.#state = 'v2-header';
  }

  /** A CARv2's header: characteristics (16 bytes), then the payload's offset and size (u64, little endian). */
  #startPayload(): void {
    const u64 = (at: number): number => this.#v2.slice(at, at + 8).reduce((sum, byte, k) => sum + byte * 2 ** (8 * k), 0);
    const dataOffset = u64(16);
    if (dataOffset < this.#offset) return this.#fail();
    this.#payloadEnd = dataOffset + u64(24);
    // The payload is a CARv1 of its own, header first; the bytes before it are padding.
    this.#nextIsHeader = true;
    this.#skip = dataOffset - this.#offset;
    this.#state = this.#skip === 0 ? 'length' : 'skip';
  }

  #fail(): void {
    this.malformed = true;
    this.#state = 'done';
  }
}
