/**
 * A little-endian reader of account data, with the failure rules of bincode and of the SPL `Pack`
 * layouts: reading past the end, or an option tag or boolean byte out of range, throws.
 *
 * @module
 */
import bs58 from 'bs58';

/** Thrown when account data does not hold the layout being read; parsers turn it into "not parsable". */
export class NotParsable extends Error {}

/** Reads account data front to back. */
export class ByteReader {
  #offset = 0;
  /** @param data - The bytes to read. */
  constructor(readonly data: Uint8Array) {}

  /** The read position. */
  get offset(): number {
    return this.#offset;
  }

  #take(length: number): Uint8Array {
    if (this.#offset + length > this.data.length) throw new NotParsable('unexpected end of data');
    const out = this.data.subarray(this.#offset, this.#offset + length);
    this.#offset += length;
    return out;
  }

  /** A u8. */
  u8(): number {
    return this.#take(1)[0]!;
  }

  /** A u16, little-endian. */
  u16(): number {
    const b = this.#take(2);
    return b[0]! | (b[1]! << 8);
  }

  /** A u32, little-endian. */
  u32(): number {
    return Buffer.from(this.#take(4)).readUInt32LE(0);
  }

  /** A u64, little-endian. */
  u64(): bigint {
    return Buffer.from(this.#take(8)).readBigUInt64LE(0);
  }

  /** An i64, little-endian. */
  i64(): bigint {
    return Buffer.from(this.#take(8)).readBigInt64LE(0);
  }

  /** An f64, little-endian. */
  f64(): number {
    return Buffer.from(this.#take(8)).readDoubleLE(0);
  }

  /** A boolean byte: 0 or 1, anything else fails (bincode and `Pack` alike). */
  bool(): boolean {
    const value = this.u8();
    if (value > 1) throw new NotParsable(`invalid bool ${value}`);
    return value === 1;
  }

  /** A 32-byte public key, as base-58. */
  pubkey(): string {
    return bs58.encode(this.#take(32));
  }

  /** A bincode `Option<Pubkey>`: a one-byte tag, then the key when it is 1. */
  optionPubkey(): string | null {
    return this.bool() ? this.pubkey() : null;
  }

  /** An SPL `COption<Pubkey>`: a four-byte tag (0 or 1), then 32 bytes either way. */
  coptionPubkey(): string | null {
    const tag = this.u32();
    const key = this.pubkey();
    if (tag > 1) throw new NotParsable(`invalid COption tag ${tag}`);
    return tag === 1 ? key : null;
  }

  /** An SPL `COption<u64>`: a four-byte tag (0 or 1), then 8 bytes either way. */
  coptionU64(): bigint | null {
    const tag = this.u32();
    const value = this.u64();
    if (tag > 1) throw new NotParsable(`invalid COption tag ${tag}`);
    return tag === 1 ? value : null;
  }

  /** The bytes from the read position to the end. */
  rest(): Uint8Array {
    return this.#take(this.data.length - this.#offset);
  }
}
