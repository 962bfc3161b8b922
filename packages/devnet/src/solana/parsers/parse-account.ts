/**
 * `jsonParsed` for account data, as agave's `parse_account_data`: the owner program picks the parser;
 * when there is none, or the data does not parse, the caller falls back to base64.
 *
 * @module
 */
import { parseLookupTable } from './lookup-table.js';
import { parseNonce } from './nonce.js';
import { parseSysvar, SYSVAR_OWNER } from './sysvar.js';
import { parseToken, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from './token.js';
import { parseUpgradeableLoader } from './upgradeable-loader.js';

/** agave's `ParsedAccount`: the program's name, the parsed data, and the data's size. */
export interface ParsedAccount {
  /** Kebab-case program name (`spl-token`, `nonce`, `address-lookup-table`...). */
  readonly program: string;
  /** The parsed data: `{type, info?}`. */
  readonly parsed: unknown;
  /** Size of the account's data, in bytes. */
  readonly space: number;
}

/** What a parser may need besides the account's data. */
export interface ParseContext {
  /** The account's own address (sysvars are told apart by it). */
  readonly address: string;
  /** For token accounts: the decimals of their mint, when the mint was found. */
  readonly mintDecimals?: number;
}

const PROGRAMS: Readonly<Record<string, { name: string; parse: (data: Uint8Array, ctx: ParseContext) => unknown }>> = {
  AddressLookupTab1e1111111111111111111111111: { name: 'address-lookup-table', parse: (data) => parseLookupTable(data) },
  BPFLoaderUpgradeab1e11111111111111111111111: { name: 'bpf-upgradeable-loader', parse: (data) => parseUpgradeableLoader(data) },
  '11111111111111111111111111111111': { name: 'nonce', parse: (data) => parseNonce(data) },
  [TOKEN_PROGRAM_ID]: { name: 'spl-token', parse: (data, ctx) => parseToken(data, ctx.mintDecimals) },
  [TOKEN_2022_PROGRAM_ID]: { name: 'spl-token-2022', parse: (data, ctx) => parseToken(data, ctx.mintDecimals) },
  [SYSVAR_OWNER]: { name: 'sysvar', parse: (data, ctx) => parseSysvar(ctx.address, data) },
};

/** Parses `data` of an account owned by `owner`; undefined when no parser applies or it fails. */
export function parseAccountData(owner: string, data: Uint8Array, ctx: ParseContext): ParsedAccount | undefined {
  const program = PROGRAMS[owner];
  if (program === undefined) return undefined;
  try {
    return { program: program.name, parsed: program.parse(data, ctx), space: data.length };
  } catch {
    return undefined;
  }
}
