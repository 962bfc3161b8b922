/**
 * The `spl-token` / `spl-token-2022` parser, as agave's `parse_token`: token accounts (165 bytes), mints
 * (82 bytes) and multisigs (355 bytes) in their base layouts. Token-2022 accounts that carry
 * extensions (longer data) are not parsed here and fall back to base64.
 *
 * @module
 */
import { rustF64, type RawJson } from '../json-text.js';
import { ByteReader, NotParsable } from './bytes.js';

/** The SPL Token program. */
export const TOKEN_PROGRAM_ID = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
/** The SPL Token-2022 program. */
export const TOKEN_2022_PROGRAM_ID = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';
/** Size of a token account. */
export const TOKEN_ACCOUNT_SIZE = 165;
/** Size of a mint. */
export const MINT_SIZE = 82;
/** Size of a multisig. */
export const MULTISIG_SIZE = 355;

/** Whether `owner` is one of the SPL Token programs (agave's `is_known_spl_token_id`). */
export function isSplTokenProgram(owner: string): boolean {
  return owner === TOKEN_PROGRAM_ID || owner === TOKEN_2022_PROGRAM_ID;
}

/** A token amount as agave shows it. */
export interface UiTokenAmount {
  /** `amount / 10^decimals` as an f64, or null when 10^decimals overflows a u64. */
  readonly uiAmount: RawJson;
  /** The mint's decimals. */
  readonly decimals: number;
  /** The raw amount, as a decimal string. */
  readonly amount: string;
  /** The amount with its decimal point, trailing zeros trimmed. */
  readonly uiAmountString: string;
}

/** agave's `real_number_string_trimmed`. */
function realNumberStringTrimmed(amount: bigint, decimals: number): string {
  if (decimals === 0) return amount.toString();
  const padded = amount.toString().padStart(decimals + 1, '0');
  const text = `${padded.slice(0, padded.length - decimals)}.${padded.slice(padded.length - decimals)}`;
  return text.replace(/0+$/, '').replace(/\.$/, '');
}

/** agave's `token_amount_to_ui_amount`. */
export function uiTokenAmount(amount: bigint, decimals: number): UiTokenAmount {
  const divisor = 10n ** BigInt(decimals);
  const fits = divisor <= 0xffffffffffffffffn;
  return {
    uiAmount: fits ? rustF64(Number(amount) / Number(divisor)) : rustF64(Number.NaN),
    decimals,
    amount: amount.toString(),
    uiAmountString: realNumberStringTrimmed(amount, decimals),
  };
}

/** The mint of a token account's data, when it is one (agave's `get_token_account_mint`, base layout). */
export function tokenAccountMint(data: Uint8Array): string | undefined {
  if (data.length !== TOKEN_ACCOUNT_SIZE) return undefined;
  return new ByteReader(data).pubkey();
}

/** The decimals of a mint's data, or undefined when it is not an initialized mint. */
export function mintDecimals(data: Uint8Array): number | undefined {
  try {
    const mint = readMint(data);
    return mint.decimals;
  } catch {
    return undefined;
  }
}

const STATES = ['uninitialized', 'initialized', 'frozen'] as const;

function readMint(data: Uint8Array): { mintAuthority: string | null; supply: bigint; decimals: number; isInitialized: boolean; freezeAuthority: string | null } {
  if (data.length !== MINT_SIZE) throw new NotParsable('not a mint');
  const r = new ByteReader(data);
  const mint = { mintAuthority: r.coptionPubkey(), supply: r.u64(), decimals: r.u8(), isInitialized: r.bool(), freezeAuthority: r.coptionPubkey() };
  if (!mint.isInitialized) throw new NotParsable('uninitialized mint');
  return mint;
}

function parseAccount(data: Uint8Array, decimals: number | undefined): unknown {
  const r = new ByteReader(data);
  const mint = r.pubkey();
  const owner = r.pubkey();
  const amount = r.u64();
  const delegate = r.coptionPubkey();
  const stateByte = r.u8();
  const isNative = r.coptionU64();
  const delegatedAmount = r.u64();
  const closeAuthority = r.coptionPubkey();
  const state = STATES[stateByte];
  if (state === undefined || state === 'uninitialized') throw new NotParsable('not an initialized token account');
  // Without the mint's decimals agave cannot show amounts and does not parse the account.
  if (decimals === undefined) throw new NotParsable('no mint decimals');
  return {
    type: 'account',
    info: {
      mint,
      owner,
      tokenAmount: uiTokenAmount(amount, decimals),
      delegate: delegate ?? undefined,
      state,
      isNative: isNative !== null,
      rentExemptReserve: isNative === null ? undefined : uiTokenAmount(isNative, decimals),
      delegatedAmount: delegate === null ? undefined : uiTokenAmount(delegatedAmount, decimals),
      closeAuthority: closeAuthority ?? undefined,
    },
  };
}

function parseMultisig(data: Uint8Array): unknown {
  const r = new ByteReader(data);
  const m = r.u8();
  const n = r.u8();
  const isInitialized = r.bool();
  if (!isInitialized) throw new NotParsable('uninitialized multisig');
  const empty = '11111111111111111111111111111111';
  const signers = Array.from({ length: 11 }, () => r.pubkey()).filter((key) => key !== empty);
  return { type: 'multisig', info: { numRequiredSigners: m, numValidSigners: n, isInitialized, signers } };
}

/**
 * Parses token-program data: an account (needs its mint's `decimals`), a mint or a multisig, in that
 * order, as agave tries them. Throws {@link NotParsable} when none applies.
 */
export function parseToken(data: Uint8Array, decimals: number | undefined): unknown {
  if (data.length === TOKEN_ACCOUNT_SIZE) return parseAccount(data, decimals);
  if (data.length === MINT_SIZE) {
    const mint = readMint(data);
    return { type: 'mint', info: { ...mint, supply: mint.supply.toString() } };
  }
  if (data.length === MULTISIG_SIZE) return parseMultisig(data);
  throw new NotParsable('not a token-program account');
}
