/**
 * An account as agave's `getAccountInfo` encodes it (`UiAccount`): the data in the requested encoding,
 * sliced, compressed or parsed, and the base-58 size limit.
 *
 * @module
 */
import bs58 from 'bs58';
import { compress } from '@mongodb-js/zstd';
import type { LiteSvmNode, NodeAccount } from './litesvm-node.js';
import { parseAccountData } from './parsers/parse-account.js';
import { isSplTokenProgram, mintDecimals, tokenAccountMint } from './parsers/token.js';
import { RpcError } from './rpc-error.js';

/** The encodings `getAccountInfo` takes; `binary` is the legacy default (a bare base-58 string). */
export type AccountEncoding = 'binary' | 'base58' | 'base64' | 'base64+zstd' | 'jsonParsed';

/** `dataSlice`: a window on the account's data. */
export interface DataSlice {
  /** First byte. */
  readonly offset: number;
  /** Most bytes. */
  readonly length: number;
}

/** agave's `MAX_BASE58_BYTES`: larger data cannot be asked for in base-58. */
export const MAX_BASE58_BYTES = 128;

/** agave's `slice_data`: past the end is empty, a length past the end stops at the end. */
export function sliceData(data: Uint8Array, slice: DataSlice | undefined): Uint8Array {
  if (slice === undefined) return data;
  if (slice.offset >= data.length) return data.subarray(0, 0);
  return data.subarray(slice.offset, Math.min(data.length, slice.offset + slice.length));
}

/** agave's zstd step: a streaming encoder at the default level, so the frame has no content size. */
async function zstd(bytes: Uint8Array): Promise<Buffer> {
  return compress(Buffer.from(bytes), 3);
}

async function encodeData(address: string, account: NodeAccount, encoding: AccountEncoding, slice: DataSlice | undefined, mint: number | undefined): Promise<unknown> {
  const sliced = sliceData(account.data, slice);
  switch (encoding) {
    case 'binary':
      return bs58.encode(sliced);
    case 'base58':
      return [bs58.encode(sliced), 'base58'];
    case 'base64':
      return [Buffer.from(sliced).toString('base64'), 'base64'];
    case 'base64+zstd':
      try {
        return [(await zstd(sliced)).toString('base64'), 'base64+zstd'];
      } catch {
        return [Buffer.from(sliced).toString('base64'), 'base64'];
      }
    case 'jsonParsed':
      return parseAccountData(account.owner, account.data, { address, mintDecimals: mint }) ?? [Buffer.from(sliced).toString('base64'), 'base64'];
  }
}

/**
 * Encodes `account` at `address` as agave's `get_encoded_account` does:
 * - `binary`/`base58` of more than 128 bytes (after the slice) is refused with `-32600`;
 * - `jsonParsed` parses what it can and falls back to base64 of the (sliced) data; token-program
 *   accounts are parsed with their mint's decimals and ignore the slice, as agave's
 *   `get_parsed_token_account` does;
 * - `space` is always the full data size.
 */
export async function encodeAccount(node: LiteSvmNode, address: string, account: NodeAccount, encoding: AccountEncoding, slice: DataSlice | undefined): Promise<Record<string, unknown>> {
  let data: unknown;
  if (encoding === 'jsonParsed' && isSplTokenProgram(account.owner)) {
    const mintAddress = tokenAccountMint(account.data);
    const mint = mintAddress === undefined ? null : node.getAccount(mintAddress);
    data = await encodeData(address, account, encoding, undefined, mint === null ? undefined : mintDecimals(mint.data));
  } else {
    if (encoding === 'binary' || encoding === 'base58') {
      const selected = slice === undefined ? account.data.length : Math.min(slice.length, Math.max(0, account.data.length - slice.offset));
      if (selected > MAX_BASE58_BYTES) {
        throw RpcError.invalidRequest(`Encoded binary (base 58) data should be less than ${MAX_BASE58_BYTES} bytes, please use Base64 encoding.`);
      }
    }
    data = await encodeData(address, account, encoding, slice, undefined);
  }
  return {
    lamports: account.lamports,
    data,
    owner: account.owner,
    executable: account.executable,
    rentEpoch: account.rentEpoch,
    space: account.data.length,
  };
}
