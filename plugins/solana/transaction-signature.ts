/**
 * A signed transaction's first signature, read from its wire bytes: what `sendTransaction` answers, and
 * what identifies the transaction (a transaction is known by its first signature on a Solana cluster).
 *
 * @module
 */
import { bs58 as bs58Package } from './peers.js';

const bs58 = bs58Package.default;

/** The size of an ed25519 signature, in bytes. */
const SIGNATURE_BYTES = 64;

/** The bytes of a transaction sent as text in `encoding` (base-58 by default), or undefined when they do not decode. */
function wireBytes(text: string, encoding: unknown): Uint8Array | undefined {
  try {
    if (encoding === 'base64') return Buffer.from(text, 'base64');
    return bs58.decode(text);
  } catch {
    return undefined;
  }
}

/**
 * The first signature (base-58) of the transaction in `sendTransaction`'s params, or undefined when they
 * hold none (bytes that do not decode, no signature): a transaction starts with a compact-u16 count of
 * signatures, then the signatures.
 */
export function firstSignature(params: unknown): string | undefined {
  if (!Array.isArray(params) || typeof params[0] !== 'string') return undefined;
  const config = params[1] as { encoding?: unknown } | null | undefined;
  const bytes = wireBytes(params[0], config?.encoding);
  if (bytes === undefined || bytes.length === 0) return undefined;
  // compact-u16: 7 bits a byte, high bit set while more follow (at most 3 bytes).
  let count = 0;
  let offset = 0;
  for (let shift = 0; offset < 3; shift += 7) {
    const byte = bytes[offset++]!;
    count |= (byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) break;
  }
  if (count === 0 || bytes.length < offset + SIGNATURE_BYTES) return undefined;
  return bs58.encode(bytes.subarray(offset, offset + SIGNATURE_BYTES));
}
