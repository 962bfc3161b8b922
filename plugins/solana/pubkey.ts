/**
 * Public keys: the decode check that a JSON Schema pattern cannot make.
 *
 * @module
 */
import { bs58 as bs58Package } from './peers.js';

const bs58 = bs58Package.default;
import { PUBKEY_DESCRIPTION } from './schemas.js';

/** The size of a public key, in bytes. */
export const PUBKEY_BYTES = 32;

/** The longest base-58 string a 32-byte key can encode to (agave's `MAX_BASE58_LEN`). */
export const MAX_PUBKEY_BASE58_LENGTH = 44;

/**
 * Why `value` is not a public key, in the words of agave's `ParsePubkeyError` (`WrongSize`: too long,
 * or not 32 bytes once decoded; `Invalid`: not base-58), or `undefined` when it is one.
 */
export function pubkeyError(value: string): 'WrongSize' | 'Invalid' | undefined {
  if (value.length > MAX_PUBKEY_BASE58_LENGTH) return 'WrongSize';
  let bytes: Uint8Array;
  try {
    bytes = bs58.decode(value);
  } catch {
    return 'Invalid';
  }
  return bytes.length === PUBKEY_BYTES ? undefined : 'WrongSize';
}

/** The bytes of a base-58 public key; throws when `value` is not one. */
export function decodePubkey(value: string): Uint8Array {
  const problem = pubkeyError(value);
  if (problem !== undefined) throw new Error(`not a public key (${problem}): ${value}`);
  return bs58.decode(value);
}

/**
 * A params check (run by the `validate` stage, before anything is charged) that refuses the call with
 * `-32602` when positional parameter `index` (already checked against the base-58 pattern) does not
 * decode to exactly 32 bytes. The pattern lets through strings of 32 to 44 base-58 characters, some of
 * which decode to 31 or 33 bytes; agave refuses those with `Invalid param: WrongSize`.
 */
export function pubkeyParamCheck(index: number, name: string): (params: unknown) => string | undefined {
  return (params) => {
    const value = Array.isArray(params) ? (params as unknown[])[index] : undefined;
    if (typeof value !== 'string') return undefined;
    const problem = pubkeyError(value);
    if (problem === undefined) return undefined;
    const detail = problem === 'WrongSize' ? `it does not decode to ${PUBKEY_BYTES} bytes` : 'it is not base-58';
    return `invalid argument ${index} (${name}): must be ${PUBKEY_DESCRIPTION} (${detail})`;
  };
}
