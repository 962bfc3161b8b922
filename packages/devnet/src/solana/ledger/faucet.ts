/**
 * The node's faucet: a funded system account whose key the node holds, paying airdrops with real,
 * signed system transfers, so an airdrop is a transaction like any other (in a block, in the history
 * of both addresses, confirmable by `signatureSubscribe`).
 *
 * @module
 */
import { createHash, createPrivateKey, createPublicKey, sign, type KeyObject } from 'node:crypto';
import bs58 from 'bs58';
import type { LiteSvmNode } from '../litesvm-node.js';
import { SYSTEM_PROGRAM_ID } from '../litesvm-node.js';
import { decodeWireTransaction, type WireTransaction } from './wire-transaction.js';

/** Lamports the faucet starts with: 500 million SOL, as solana-test-validator's faucet. */
export const FAUCET_LAMPORTS = 500_000_000n * 1_000_000_000n;

/** A faucet key pair. */
export interface Faucet {
  /** Its address, base-58. */
  readonly address: string;
  /** Signs a message. */
  readonly sign: (message: Uint8Array) => Uint8Array;
}

// PKCS#8 DER prefix of an Ed25519 private key; the 32-byte seed follows.
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** The faucet of a node whose identity seed is `seed`, funded in `node`. */
export function openFaucet(node: LiteSvmNode, seed: string): Faucet {
  const key: KeyObject = createPrivateKey({
    key: Buffer.concat([ED25519_PKCS8_PREFIX, createHash('sha256').update(`tollgate-litesvm-faucet:${seed}`).digest()]),
    format: 'der',
    type: 'pkcs8',
  });
  const jwk = createPublicKey(key).export({ format: 'jwk' });
  const address = bs58.encode(Buffer.from(jwk.x!, 'base64url'));
  node.setAccount(address, { lamports: FAUCET_LAMPORTS });
  return { address, sign: (message) => sign(null, message, key) };
}

const shortVec = (n: number): Buffer => Buffer.from(n < 0x80 ? [n] : [(n & 0x7f) | 0x80, n >> 7]);

/** A signed legacy system transfer of `lamports` from the faucet to `to`, on `blockhash`. */
export function faucetTransfer(faucet: Faucet, to: string, lamports: bigint, blockhash: string): WireTransaction {
  const data = Buffer.alloc(12);
  data.writeUInt32LE(2, 0); // SystemInstruction::Transfer
  data.writeBigUInt64LE(lamports, 4);
  const message = Buffer.concat([
    Buffer.from([1, 0, 1]),
    shortVec(3), Buffer.from(bs58.decode(faucet.address)), Buffer.from(bs58.decode(to)), Buffer.from(bs58.decode(SYSTEM_PROGRAM_ID)),
    Buffer.from(bs58.decode(blockhash)),
    shortVec(1), Buffer.from([2]), shortVec(2), Buffer.from([0, 1]), shortVec(data.length), data,
  ]);
  return decodeWireTransaction(Buffer.concat([shortVec(1), faucet.sign(message), message]));
}
