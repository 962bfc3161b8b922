/**
 * SPL Token reads over the token accounts the VM holds: `getTokenAccountBalance`,
 * `getTokenAccountsByOwner`, `getTokenAccountsByDelegate`, `getTokenLargestAccounts`, `getTokenSupply`.
 *
 * @module
 */
import bs58 from 'bs58';
import { encodeAccount } from '../account-encoding.js';
import type { LiteSvmNode, NodeAccount } from '../litesvm-node.js';
import { isSplTokenProgram, mintDecimals, TOKEN_2022_PROGRAM_ID, TOKEN_ACCOUNT_SIZE, TOKEN_PROGRAM_ID, uiTokenAmount } from '../parsers/token.js';
import { RpcError } from '../rpc-error.js';
import { positional, readConfig, readString, readVariant, serdeError } from '../serde-params.js';
import { ACCOUNT_ENCODINGS } from './accounts.js';
import { contextSlot, readDataSlice, verifyPubkey, withContext, type MethodContext } from './common.js';

const key = (data: Uint8Array, offset: number): string => bs58.encode(data.subarray(offset, offset + 32));
const amountOf = (data: Uint8Array): bigint => Buffer.from(data).readBigUInt64LE(64);
const isTokenAccount = (account: NodeAccount): boolean => isSplTokenProgram(account.owner) && account.data.length >= TOKEN_ACCOUNT_SIZE && account.data[108] !== 0;

function decimalsOfMint(node: LiteSvmNode, mint: string): number | undefined {
  const account = node.getAccount(mint);
  return account === null || !isSplTokenProgram(account.owner) ? undefined : mintDecimals(account.data);
}

function getTokenAccountBalance(params: unknown, { node }: MethodContext): unknown {
  const [address, rawConfig] = positional(params, 1, 2);
  const pubkey = verifyPubkey(readString(address));
  const slot = contextSlot(node, readConfig(rawConfig, 'RpcContextConfig'));
  const account = node.getAccount(pubkey);
  if (account === null || !isTokenAccount(account)) throw RpcError.invalidParams('Invalid param: not a Token account');
  const decimals = decimalsOfMint(node, key(account.data, 0));
  if (decimals === undefined) throw RpcError.invalidParams('Invalid param: mint could not be unpacked');
  return withContext(node, slot, uiTokenAmount(amountOf(account.data), decimals));
}

function getTokenSupply(params: unknown, { node }: MethodContext): unknown {
  const [address, rawConfig] = positional(params, 1, 2);
  const pubkey = verifyPubkey(readString(address));
  const slot = contextSlot(node, readConfig(rawConfig, 'RpcContextConfig'));
  const account = node.getAccount(pubkey);
  const decimals = account === null || !isSplTokenProgram(account.owner) ? undefined : mintDecimals(account.data);
  if (account === null || decimals === undefined) throw RpcError.invalidParams('Invalid param: not a Token mint');
  return withContext(node, slot, uiTokenAmount(Buffer.from(account.data).readBigUInt64LE(36), decimals));
}

/** The token accounts of a program (or both) that `keep` selects. */
function tokenAccounts(node: LiteSvmNode, programs: readonly string[], keep: (data: Uint8Array) => boolean): Array<{ address: string; account: NodeAccount }> {
  return programs.flatMap((program) => node.programAccounts(program)).filter(({ account }) => isTokenAccount(account) && keep(account.data));
}

/** `{ mint }` or `{ programId }`: which programs to scan and which mint to keep. */
function readTokenFilter(node: LiteSvmNode, value: unknown): { programs: string[]; mint: string | undefined } {
  const filter = readConfig(value, 'RpcTokenAccountsFilter');
  if (filter !== undefined && typeof filter.mint === 'string') {
    const mint = verifyPubkey(filter.mint);
    const owner = node.getAccount(mint)?.owner;
    if (owner === undefined || !isSplTokenProgram(owner)) throw RpcError.invalidParams('Invalid param: could not find mint');
    return { programs: [owner], mint };
  }
  if (filter !== undefined && typeof filter.programId === 'string') {
    const program = verifyPubkey(filter.programId);
    if (!isSplTokenProgram(program)) throw RpcError.invalidParams('Invalid param: unrecognized Token program id');
    return { programs: [program], mint: undefined };
  }
  throw serdeError('data did not match any variant of untagged enum RpcTokenAccountsFilter');
}

function accountsBy(offset: number, withTag: boolean) {
  return async (params: unknown, { node }: MethodContext): Promise<unknown> => {
    const [address, rawFilter, rawConfig] = positional(params, 2, 3);
    const pubkey = verifyPubkey(readString(address));
    const config = readConfig(rawConfig, 'RpcAccountInfoConfig');
    const encoding = readVariant(config?.encoding, ACCOUNT_ENCODINGS) ?? 'binary';
    const slice = readDataSlice(config?.dataSlice);
    const { programs, mint } = readTokenFilter(node, rawFilter);
    const slot = contextSlot(node, config);
    const hits = tokenAccounts(node, programs, (data) =>
      (!withTag || Buffer.from(data).readUInt32LE(offset - 4) === 1) && key(data, offset) === pubkey && (mint === undefined || key(data, 0) === mint));
    const value = await Promise.all(hits.map(async (hit) => ({ pubkey: hit.address, account: await encodeAccount(node, hit.address, hit.account, encoding, slice) })));
    return withContext(node, slot, value);
  };
}

function getTokenLargestAccounts(params: unknown, { node }: MethodContext): unknown {
  const [address, rawConfig] = positional(params, 1, 2);
  const mint = verifyPubkey(readString(address));
  const slot = contextSlot(node, readConfig(rawConfig, 'RpcContextConfig'));
  const decimals = decimalsOfMint(node, mint);
  if (decimals === undefined) throw RpcError.invalidParams('Invalid param: not a Token mint');
  const holders = tokenAccounts(node, [TOKEN_PROGRAM_ID, TOKEN_2022_PROGRAM_ID], (data) => key(data, 0) === mint)
    .map(({ address: holder, account }) => ({ holder, amount: amountOf(account.data) }))
    .sort((a, b) => (a.amount === b.amount ? (a.holder < b.holder ? -1 : 1) : a.amount > b.amount ? -1 : 1))
    .slice(0, 20);
  return withContext(node, slot, holders.map(({ holder, amount }) => ({ address: holder, ...uiTokenAmount(amount, decimals) })));
}

/** The token methods by name. */
export const TOKEN_METHODS = {
  getTokenAccountBalance,
  getTokenAccountsByOwner: accountsBy(32, false),
  // The delegate is a COption<Pubkey>: a u32 tag at 72, the key at 76.
  getTokenAccountsByDelegate: accountsBy(76, true),
  getTokenLargestAccounts,
  getTokenSupply,
};
