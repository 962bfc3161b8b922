/**
 * A signed transaction's hash, computed from its bytes: keccak-256 of the raw bytes, for a legacy
 * (RLP) transaction and a typed (EIP-2718) one alike, since the hash covers the type byte too.
 *
 * keccak-256 comes from `@noble/hashes` (audited, dependency-free, the hash behind viem and ethers), an
 * optional peer loaded on first use: without it, `evmFamily()` works and a resent transaction gets the
 * node's own error, as before (a warning names the package once).
 *
 * @module
 */
import { importPeer, MissingPeerError } from '../../core/plugin-api.js';

type Keccak256 = (bytes: Uint8Array) => Uint8Array;

let loading: Promise<Keccak256 | undefined> | undefined;

/** keccak-256, or undefined when `@noble/hashes` is not installed (`onMissing` is told once). */
export function loadKeccak256(onMissing: (error: MissingPeerError) => void): Promise<Keccak256 | undefined> {
  loading ??= importPeer('@noble/hashes', () => import('@noble/hashes/sha3'), 'tollgate/plugins/evm (hashes of resent transactions)').then(
    (sha3) => sha3.keccak_256,
    (error: unknown) => {
      if (!(error instanceof MissingPeerError)) throw error;
      onMissing(error);
      return undefined;
    },
  );
  return loading;
}

/** The hash of a signed transaction given as `0x`-prefixed hex, or undefined when it is not hex bytes. */
export function transactionHash(raw: unknown, keccak256: Keccak256): string | undefined {
  if (typeof raw !== 'string' || !/^0x(?:[0-9a-fA-F]{2})+$/.test(raw)) return undefined;
  return `0x${Buffer.from(keccak256(Buffer.from(raw.slice(2), 'hex'))).toString('hex')}`;
}
