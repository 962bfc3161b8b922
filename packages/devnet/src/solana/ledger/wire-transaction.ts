/**
 * The wire format of a Solana transaction (legacy and v0), read into the fields agave's RPC shows:
 * signatures, the message header, static account keys, the blockhash, compiled instructions and
 * address-table lookups.
 *
 * @module
 */
import bs58 from 'bs58';

/** A compiled instruction as it is on the wire. */
export interface WireInstruction {
  /** Index of the program in the account keys. */
  readonly programIdIndex: number;
  /** Indexes of its accounts. */
  readonly accounts: readonly number[];
  /** Its data. */
  readonly data: Uint8Array;
}

/** An address-table lookup of a v0 message. */
export interface WireLookup {
  /** The table's address, base-58. */
  readonly accountKey: string;
  /** Indexes of writable addresses in the table. */
  readonly writableIndexes: readonly number[];
  /** Indexes of read-only addresses in the table. */
  readonly readonlyIndexes: readonly number[];
}

/** A decoded transaction. */
export interface WireTransaction {
  /** The whole transaction's bytes. */
  readonly bytes: Uint8Array;
  /** Base-58 signatures; the first is the transaction's id. */
  readonly signatures: readonly string[];
  /** The message's bytes (what was signed). */
  readonly message: Uint8Array;
  /** `legacy` or 0. */
  readonly version: 'legacy' | 0;
  /** The message header. */
  readonly header: { readonly numRequiredSignatures: number; readonly numReadonlySignedAccounts: number; readonly numReadonlyUnsignedAccounts: number };
  /** Static account keys, base-58. */
  readonly accountKeys: readonly string[];
  /** The recent blockhash (or durable nonce), base-58. */
  readonly recentBlockhash: string;
  /** Where the blockhash's 32 bytes start in {@link bytes} (for `replaceRecentBlockhash`). */
  readonly blockhashOffset: number;
  /** Compiled instructions. */
  readonly instructions: readonly WireInstruction[];
  /** Address-table lookups (v0 only). */
  readonly addressTableLookups: readonly WireLookup[];
}

/** A transaction that cannot be decoded. */
export class MalformedTransaction extends Error {}

class Reader {
  #at = 0;
  constructor(readonly bytes: Uint8Array) {}
  get offset(): number { return this.#at; }
  byte(): number {
    if (this.#at >= this.bytes.length) throw new MalformedTransaction('unexpected end');
    return this.bytes[this.#at++]!;
  }
  take(n: number): Uint8Array {
    if (this.#at + n > this.bytes.length) throw new MalformedTransaction('unexpected end');
    const out = this.bytes.subarray(this.#at, this.#at + n);
    this.#at += n;
    return out;
  }
  /** Solana's compact-u16 length prefix. */
  shortVec(): number {
    let value = 0;
    for (let shift = 0; shift < 21; shift += 7) {
      const b = this.byte();
      value |= (b & 0x7f) << shift;
      if ((b & 0x80) === 0) return value;
    }
    throw new MalformedTransaction('bad compact-u16');
  }
  list<T>(read: () => T): T[] {
    const n = this.shortVec();
    const out: T[] = [];
    for (let i = 0; i < n; i++) out.push(read());
    return out;
  }
}

/**
 * Decodes a wire transaction.
 *
 * @throws MalformedTransaction when the bytes are not one whole transaction.
 */
export function decodeWireTransaction(bytes: Uint8Array): WireTransaction {
  const r = new Reader(bytes);
  const signatures = r.list(() => bs58.encode(r.take(64)));
  const messageStart = r.offset;
  const first = r.byte();
  let version: 'legacy' | 0 = 'legacy';
  let headerFirst = first;
  if (first & 0x80) {
    if ((first & 0x7f) !== 0) throw new MalformedTransaction(`unsupported version ${first & 0x7f}`);
    version = 0;
    headerFirst = r.byte();
  }
  const header = { numRequiredSignatures: headerFirst, numReadonlySignedAccounts: r.byte(), numReadonlyUnsignedAccounts: r.byte() };
  const accountKeys = r.list(() => bs58.encode(r.take(32)));
  const blockhashOffset = r.offset;
  const recentBlockhash = bs58.encode(r.take(32));
  const instructions = r.list(() => ({ programIdIndex: r.byte(), accounts: r.list(() => r.byte()), data: r.take(r.shortVec()) }));
  const addressTableLookups = version === 0
    ? r.list(() => ({ accountKey: bs58.encode(r.take(32)), writableIndexes: r.list(() => r.byte()), readonlyIndexes: r.list(() => r.byte()) }))
    : [];
  if (r.offset !== bytes.length) throw new MalformedTransaction('trailing bytes');
  if (signatures.length === 0) throw new MalformedTransaction('no signatures');
  return { bytes, signatures, message: bytes.subarray(messageStart), version, header, accountKeys, recentBlockhash, blockhashOffset, instructions, addressTableLookups };
}

/** Whether static account `index` of `tx` is writable (the header's rule). */
export function isWritable(tx: WireTransaction, index: number): boolean {
  const { numRequiredSignatures: signed, numReadonlySignedAccounts: roSigned, numReadonlyUnsignedAccounts: roUnsigned } = tx.header;
  if (index < signed) return index < signed - roSigned;
  return index < tx.accountKeys.length - roUnsigned;
}

/** Whether static account `index` of `tx` signs it. */
export function isSigner(tx: WireTransaction, index: number): boolean {
  return index < tx.header.numRequiredSignatures;
}
