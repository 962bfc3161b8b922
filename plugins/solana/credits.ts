/**
 * The solana family's price scale: one tier per kind of work a node does for a call (see the README's
 * "Methods and credits"). The spec prices two methods, `getAccountInfo` and `getClusterNodes`, at 160:
 * that is the tier of a read of one account (or one transaction, one small list) and the scale is built
 * around it.
 *
 * @module
 */

/** Credits per call, by tier. */
export const SOLANA_CREDITS = Object.freeze({
  /** A fact the node answers from memory: its health, a slot, a version, the epoch schedule. */
  status: 5,
  /** Recent chain state that is not an account: a blockhash, a fee, a block's time, recent samples. */
  chainState: 40,
  /** One account, one transaction, one token balance: the spec's `getAccountInfo` and `getClusterNodes`. */
  oneRead: 160,
  /** Lists bounded by a per-call limit: several accounts, signatures of an address, a block, a range of blocks. */
  list: 320,
  /** A scan of the accounts database: `getProgramAccounts`, `getLargestAccounts`, `getSupply`, token-account lookups by owner. */
  scan: 1000,
  /** A simulation: the node executes the transaction (as `eth_estimateGas` does on the evm side). */
  simulate: 300,
  /** A write: a transaction (or an airdrop) the node forwards to the cluster (as `eth_sendRawTransaction`). */
  write: 720,
});
