/**
 * Account reads: `getAccountInfo`, `getBalance`, `getMultipleAccounts`, `getProgramAccounts`,
 * `getLargestAccounts`, `getMinimumBalanceForRentExemption`.
 *
 * @module
 */
import bs58 from 'bs58';
import { encodeAccount, type AccountEncoding } from '../account-encoding.js';
import type { NodeAccount } from '../litesvm-node.js';
import { RpcError } from '../rpc-error.js';
import { positional, readConfig, readString, readU64, readVariant, serdeError, unexpected } from '../serde-params.js';
import { contextSlot, readBool, readDataSlice, readStringList, verifyPubkey, withContext, type MethodContext } from './common.js';

/** The account encodings agave takes. */
export const ACCOUNT_ENCODINGS: readonly AccountEncoding[] = ['binary', 'base58', 'base64', 'jsonParsed', 'base64+zstd'];
/** agave's `MAX_MULTIPLE_ACCOUNTS`. */
export const MAX_MULTIPLE_ACCOUNTS = 100;

async function getAccountInfo(params: unknown, { node }: MethodContext): Promise<unknown> {
  const [address, rawConfig] = positional(params, 1, 2);
  const pubkeyText = readString(address);
  const config = readConfig(rawConfig, 'RpcAccountInfoConfig');
  const encoding = readVariant(config?.encoding, ACCOUNT_ENCODINGS) ?? 'binary';
  const slice = readDataSlice(config?.dataSlice);
  readU64(config?.minContextSlot);
  const pubkey = verifyPubkey(pubkeyText);
  const slot = contextSlot(node, config);
  const account = node.getAccount(pubkey);
  return withContext(node, slot, account === null ? null : await encodeAccount(node, pubkey, account, encoding, slice));
}

function getBalance(params: unknown, { node }: MethodContext): unknown {
  const [address, rawConfig] = positional(params, 1, 2);
  const pubkey = verifyPubkey(readString(address));
  const slot = contextSlot(node, readConfig(rawConfig, 'RpcContextConfig'));
  return withContext(node, slot, node.getAccount(pubkey)?.lamports ?? 0n);
}

async function getMultipleAccounts(params: unknown, { node }: MethodContext): Promise<unknown> {
  const [addresses, rawConfig] = positional(params, 1, 2);
  const list = readStringList(addresses);
  const config = readConfig(rawConfig, 'RpcAccountInfoConfig');
  const encoding = readVariant(config?.encoding, ACCOUNT_ENCODINGS) ?? 'base64';
  const slice = readDataSlice(config?.dataSlice);
  if (list.length > MAX_MULTIPLE_ACCOUNTS) throw RpcError.invalidParams(`Too many inputs provided; max ${MAX_MULTIPLE_ACCOUNTS}`);
  const pubkeys = list.map(verifyPubkey);
  const slot = contextSlot(node, config);
  const values = await Promise.all(pubkeys.map(async (pubkey) => {
    const account = node.getAccount(pubkey);
    return account === null ? null : encodeAccount(node, pubkey, account, encoding, slice);
  }));
  return withContext(node, slot, values);
}

/** A `getProgramAccounts` filter: whether an account passes. */
export type Filter = (account: NodeAccount) => boolean;

function readFilter(value: unknown): Filter {
  const filter = readConfig(value, 'RpcFilterType');
  if (filter !== undefined && 'dataSize' in filter) {
    const size = readU64(filter.dataSize)!;
    return (account) => account.data.length === size;
  }
  if (filter !== undefined && 'memcmp' in filter) {
    const memcmp = readConfig(filter.memcmp, 'Memcmp')!;
    const offset = readU64(memcmp.offset, 'usize') ?? 0;
    const text = readString(memcmp.bytes);
    const encoding = readVariant(memcmp.encoding, ['base58', 'base64'] as const) ?? 'base58';
    let bytes: Uint8Array;
    try {
      if (encoding === 'base58' && text.length > 175) throw new Error('too long');
      bytes = encoding === 'base58' ? bs58.decode(text) : Buffer.from(text, 'base64');
    } catch {
      throw RpcError.invalidParams(`Invalid param: ${encoding === 'base58' ? 'Base58' : 'Base64'} encoding error`);
    }
    if (bytes.length > 128) throw RpcError.invalidParams('Invalid param: data too large');
    return (account) => account.data.length >= offset + bytes.length && Buffer.from(account.data.subarray(offset, offset + bytes.length)).equals(bytes);
  }
  if (filter !== undefined && 'tokenAccountState' in filter) return (account) => account.data.length === 165 && account.data[108] !== 0;
  throw serdeError(`invalid type: ${unexpected(value)}, expected one of dataSize, memcmp, tokenAccountState`);
}

/** agave's `MAX_GET_PROGRAM_ACCOUNT_FILTERS`. */
export const MAX_PROGRAM_ACCOUNT_FILTERS = 4;

/** The `filters` of `getProgramAccounts` and `programSubscribe`, as predicates on an account. */
export function readProgramFilters(value: unknown): Filter[] {
  const rawFilters = value ?? [];
  if (!Array.isArray(rawFilters)) throw serdeError(`invalid type: ${unexpected(rawFilters)}, expected a sequence`);
  if (rawFilters.length > MAX_PROGRAM_ACCOUNT_FILTERS) throw RpcError.invalidParams(`Too many filters provided; max ${MAX_PROGRAM_ACCOUNT_FILTERS}`);
  return rawFilters.map(readFilter);
}

async function getProgramAccounts(params: unknown, { node }: MethodContext): Promise<unknown> {
  const [program, rawConfig] = positional(params, 1, 2);
  const programText = readString(program);
  const config = readConfig(rawConfig, 'RpcProgramAccountsConfig');
  const encoding = readVariant(config?.encoding, ACCOUNT_ENCODINGS) ?? 'binary';
  const slice = readDataSlice(config?.dataSlice);
  const filters = readProgramFilters(config?.filters);
  const wrap = readBool(config?.withContext) ?? false;
  const programId = verifyPubkey(programText);
  const slot = contextSlot(node, config);
  const matched = node.programAccounts(programId).filter(({ account }) => filters.every((f) => f(account)));
  const value = await Promise.all(matched.map(async ({ address, account }) => ({ pubkey: address, account: await encodeAccount(node, address, account, encoding, slice) })));
  return wrap ? withContext(node, slot, value) : value;
}

/** Owners whose accounts `getLargestAccounts` and `getSupply` count: every program that holds lamports on a devnet. */
export const OWNERS = [
  '11111111111111111111111111111111', 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA', 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb',
  'BPFLoaderUpgradeab1e11111111111111111111111', 'BPFLoader2111111111111111111111111111111111', 'NativeLoader1111111111111111111111111111111',
  'Sysvar1111111111111111111111111111111111111', 'Stake11111111111111111111111111111111111111', 'Vote111111111111111111111111111111111111111',
  'AddressLookupTab1e1111111111111111111111111',
];

function getLargestAccounts(params: unknown, { node }: MethodContext): unknown {
  const [rawConfig] = positional(params, 0, 1);
  const config = readConfig(rawConfig, 'RpcLargestAccountsConfig');
  readVariant(config?.filter, ['circulating', 'nonCirculating'] as const);
  const slot = contextSlot(node, config);
  const all = OWNERS.flatMap((owner) => node.programAccounts(owner));
  // Largest first; equal balances by address, so that the answer does not depend on the VM's storage order.
  all.sort((a, b) => (a.account.lamports === b.account.lamports ? (a.address < b.address ? -1 : 1) : a.account.lamports > b.account.lamports ? -1 : 1));
  // A devnet has no non-circulating supply: both filters rank every account.
  return withContext(node, slot, all.slice(0, 20).map(({ address, account }) => ({ lamports: account.lamports, address })));
}

function getMinimumBalanceForRentExemption(params: unknown, { node }: MethodContext): unknown {
  const [size, rawConfig] = positional(params, 1, 2);
  const length = readU64(size, 'usize');
  if (length === undefined) throw serdeError(`invalid type: ${unexpected(size)}, expected usize`);
  contextSlot(node, readConfig(rawConfig, 'RpcContextConfig'));
  return node.rentExemptMinimum(length);
}

/** The account methods by name. */
export const ACCOUNT_METHODS = { getAccountInfo, getBalance, getMultipleAccounts, getProgramAccounts, getLargestAccounts, getMinimumBalanceForRentExemption };
