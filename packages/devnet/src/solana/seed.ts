/**
 * What the embedded Solana node holds at startup: a wallet, a data account, programs, an SPL Token mint
 * and token account, and a durable-nonce account, at fixed addresses.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import bs58 from 'bs58';
import { RENT_EXEMPT_EPOCH, SYSTEM_PROGRAM_ID, type LiteSvmNode } from './litesvm-node.js';
import { MINT_SIZE, TOKEN_ACCOUNT_SIZE, TOKEN_PROGRAM_ID } from './parsers/token.js';

/** One seeded account: its address and what was written. */
export interface SeededAccount {
  /** Base-58 address. */
  readonly address: string;
  /** Lamports. */
  readonly lamports: bigint;
  /** Owner program. */
  readonly owner: string;
  /** Data bytes. */
  readonly data: Uint8Array;
  /** Whether it is executable. */
  readonly executable: boolean;
  /** Rent epoch. */
  readonly rentEpoch: bigint;
}

/** Every account the seed wrote or relies on, by role. */
export interface SolanaSeed {
  /** A system-owned wallet with 1,000 SOL and no data (jsonParsed falls back to `["", "base64"]`). */
  readonly wallet: SeededAccount;
  /** A system-owned account whose data is the 13 bytes `tollgate-seed` (no parser applies). */
  readonly dataAccount: SeededAccount;
  /** An executable program: LiteSVM's SPL Token program (upgradeable loader, 36 bytes pointing at its program data). */
  readonly program: SeededAccount;
  /** A program larger than 128 bytes (LiteSVM's SPL Memo v2, BPF loader 2): refused in base58. */
  readonly largeProgram: SeededAccount;
  /** An SPL Token mint: 6 decimals, supply 1,000,000 tokens, mint authority the wallet, no freeze authority. */
  readonly mint: SeededAccount;
  /** An SPL Token account of {@link mint} owned by the wallet, holding 1,234.56789 tokens. */
  readonly tokenAccount: SeededAccount;
  /** An initialized durable-nonce account whose authority is the wallet (parses as `nonce`). */
  readonly nonceAccount: SeededAccount;
  /** An address with no account (`value: null`). */
  readonly missing: string;
  /** Decimals of the mint. */
  readonly decimals: number;
  /** Raw amount of the token account (`1234567890`). */
  readonly tokenAmount: bigint;
}

/** A fixed 32-byte address for a seed role. */
export function seedAddress(label: string): string {
  return bs58.encode(createHash('sha256').update(`tollgate-solana-seed:${label}`).digest());
}

const u64 = (value: bigint): Buffer => { const b = Buffer.alloc(8); b.writeBigUInt64LE(value); return b; };
const u32 = (value: number): Buffer => { const b = Buffer.alloc(4); b.writeUInt32LE(value); return b; };
const coptionKey = (key: string | null): Buffer => Buffer.concat([u32(key === null ? 0 : 1), key === null ? Buffer.alloc(32) : Buffer.from(bs58.decode(key))]);

/** The 82 bytes of an initialized SPL Token mint. */
export function mintData(mintAuthority: string | null, supply: bigint, decimals: number, freezeAuthority: string | null): Uint8Array {
  const data = Buffer.concat([coptionKey(mintAuthority), u64(supply), Buffer.from([decimals, 1]), coptionKey(freezeAuthority)]);
  if (data.length !== MINT_SIZE) throw new Error('bad mint layout');
  return data;
}

/** The 165 bytes of an initialized SPL Token account (no delegate, not native, no close authority). */
export function tokenAccountData(mint: string, owner: string, amount: bigint): Uint8Array {
  const data = Buffer.concat([
    Buffer.from(bs58.decode(mint)), Buffer.from(bs58.decode(owner)), u64(amount),
    coptionKey(null), Buffer.from([1]), u32(0), u64(0n), u64(0n), coptionKey(null),
  ]);
  if (data.length !== TOKEN_ACCOUNT_SIZE) throw new Error('bad token account layout');
  return data;
}

/** The 80 bytes of an initialized durable-nonce account (current version). */
export function nonceData(authority: string, blockhash: string, lamportsPerSignature: bigint): Uint8Array {
  return Buffer.concat([u32(1), u32(1), Buffer.from(bs58.decode(authority)), Buffer.from(bs58.decode(blockhash)), u64(lamportsPerSignature)]);
}

function read(node: LiteSvmNode, address: string): SeededAccount {
  const account = node.getAccount(address);
  if (account === null) throw new Error(`litesvm seed: ${address} is missing`);
  return { address, ...account };
}

/** LiteSVM's SPL Memo v2 program (BPF loader 2, 2,304 bytes). */
export const MEMO_PROGRAM_ID = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr';

/** Rewrites an existing account with rent epoch u64::MAX, everything else unchanged. */
function exemptFromRent(node: LiteSvmNode, address: string): SeededAccount {
  const account = read(node, address);
  node.setAccount(address, { ...account, rentEpoch: RENT_EXEMPT_EPOCH });
  return read(node, address);
}

/** Writes the seed accounts into `node` and describes them. */
export function seedSolana(node: LiteSvmNode): SolanaSeed {
  const wallet = seedAddress('wallet');
  const decimals = 6;
  const tokenAmount = 1_234_567_890n;
  const write = (label: string, owner: string, data: Uint8Array, lamports?: bigint): SeededAccount => {
    const address = label === 'wallet' ? wallet : seedAddress(label);
    node.setAccount(address, { lamports: lamports ?? node.rentExemptMinimum(data.length), data, owner });
    return read(node, address);
  };
  const seededWallet = write('wallet', SYSTEM_PROGRAM_ID, new Uint8Array(0), 1_000_000_000_000n);
  const dataAccount = write('data', SYSTEM_PROGRAM_ID, Buffer.from('tollgate-seed'));
  const mint = write('mint', TOKEN_PROGRAM_ID, mintData(wallet, 1_000_000_000_000n, decimals, null));
  const tokenAccount = write('token-account', TOKEN_PROGRAM_ID, tokenAccountData(mint.address, wallet, tokenAmount));
  const nonceAccount = write('nonce', SYSTEM_PROGRAM_ID, nonceData(wallet, seedAddress('nonce-blockhash'), 5000n));
  // LiteSVM loads its programs with rent epoch 0; a cluster reports u64::MAX for rent-exempt accounts.
  const program = exemptFromRent(node, TOKEN_PROGRAM_ID);
  exemptFromRent(node, bs58.encode(program.data.subarray(4)));
  const largeProgram = exemptFromRent(node, MEMO_PROGRAM_ID);
  return {
    wallet: seededWallet,
    dataAccount,
    program,
    largeProgram,
    mint,
    tokenAccount,
    nonceAccount,
    missing: seedAddress('missing'),
    decimals,
    tokenAmount,
  };
}
