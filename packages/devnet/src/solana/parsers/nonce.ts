/**
 * The `nonce` parser of system-owned accounts, as agave's `parse_nonce`: an initialized durable-nonce
 * account parses; anything else (a plain wallet with empty data, an uninitialized nonce) does not,
 * and falls back to base64.
 *
 * @module
 */
import { ByteReader, NotParsable } from './bytes.js';

/** Parses bincode `nonce::state::Versions`: only `Initialized` state is parsable. */
export function parseNonce(data: Uint8Array): unknown {
  const r = new ByteReader(data);
  const version = r.u32();
  if (version > 1) throw new NotParsable('unknown nonce version');
  const state = r.u32();
  if (state === 0) throw new NotParsable('uninitialized nonce');
  if (state !== 1) throw new NotParsable('unknown nonce state');
  const authority = r.pubkey();
  const blockhash = r.pubkey();
  const lamportsPerSignature = r.u64();
  return { type: 'initialized', info: { authority, blockhash, feeCalculator: { lamportsPerSignature: lamportsPerSignature.toString() } } };
}
