/**
 * A node's words for a reverted call (geth and erigon say `execution reverted`, Hardhat and Ganache
 * `VM Exception`, some providers a bare `revert`); code 3 is EIP-1474's revert with data.
 */
const REVERT = /^\s*(?:execution reverted|vm exception|revert)/i;

/**
 * True for a revert: the contract's own outcome, whatever its message says ("rate limit" included), so
 * it is the client's answer and never the provider's capacity error.
 */
export function isRevert(error: { readonly code?: unknown; readonly message?: unknown }): boolean {
  return error.code === 3 || (typeof error.message === 'string' && REVERT.test(error.message));
}

/** The head an `eth_blockNumber` probe reports: the block number, a hex quantity. */
export function blockNumberHead(result: unknown): number | undefined {
  if (typeof result === 'string' && /^0x[0-9a-fA-F]{1,13}$/.test(result)) return Number.parseInt(result.slice(2), 16);
  return undefined;
}
