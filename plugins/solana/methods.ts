/**
 * The solana family's method table: one entry per method of a Solana node's HTTP JSON-RPC API, as
 * data. Hooks (decode checks, limits, answer heads, the resent-transaction reading) are attached by
 * `createSolanaFamily` (see `family.ts`); the price tiers are `credits.ts`, explained in this plugin's
 * README with every method's cache and failover class.
 *
 * @module
 */
import type { JsonSchema } from '../../core/plugin-api.js';
import type { MethodDefinition } from '../../core/family-api.js';
import { SOLANA_CREDITS as C } from './credits.js';
import {
  accountInfoConfig,
  blockConfig,
  blockhash,
  commitment,
  commitmentConfig,
  confirmedCommitment,
  contextConfig,
  noParams,
  positional,
  programAccountsConfig,
  pubkey,
  pubkeys,
  sendTransactionConfig,
  signature,
  signaturesForAddressConfig,
  simulateTransactionConfig,
  slotOrNull,
  tokenAccountsFilter,
  transactionConfig,
  u64,
  u64UpTo,
  wireTransaction,
} from './schemas.js';

/** The most keys one `getMultipleAccounts` takes (agave's `MAX_MULTIPLE_ACCOUNTS`). */
export const MAX_MULTIPLE_ACCOUNTS = 100;
/** The most signatures one `getSignatureStatuses` takes (agave's `MAX_GET_SIGNATURE_STATUSES_QUERY_ITEMS`). */
export const MAX_SIGNATURE_STATUSES = 256;
/** The widest slot range of `getBlocks` and `getBlocksWithLimit` (agave's `MAX_GET_CONFIRMED_BLOCKS_RANGE`). */
export const MAX_BLOCKS_RANGE = 500_000;
/** The most slots one `getSlotLeaders` takes (agave's `MAX_GET_SLOT_LEADERS`). */
export const MAX_SLOT_LEADERS = 5000;
/** The most samples `getRecentPerformanceSamples` returns (agave's `MAX_RECENT_PERFORMANCE_SAMPLES`). */
export const MAX_PERFORMANCE_SAMPLES = 720;
/** The most accounts `getRecentPrioritizationFees` takes (agave's `MAX_TX_ACCOUNT_LOCKS`). */
export const MAX_PRIORITIZATION_FEE_ACCOUNTS = 128;

/** A read: sent again to another primary when one fails, and eligible for a partner provider. */
function read(name: string, params: JsonSchema, paramNames: readonly string[], credits: number, description: string): MethodDefinition {
  return { name, params, paramNames, credits, failover: true, idempotent: true, description };
}

/** The config of `getBlocks`' second argument: an end slot, or (agave's other form) the config itself. */
const endSlotOrConfig: JsonSchema = { anyOf: [slotOrNull, commitmentConfig], description: 'an end slot or a config object' };
/** The first argument of `getLeaderSchedule`: a slot, or (agave's other form) the config itself. */
const slotOrLeaderConfig: JsonSchema = {
  anyOf: [slotOrNull, { type: 'object', properties: { commitment, identity: pubkey } }],
  description: 'a slot or a config object {commitment?, identity?}',
};
/** The config of `getTokenAccountsByOwner`/`ByDelegate`: the account config. */
const tokenAccountsConfig = accountInfoConfig;

/**
 * Every method of the solana family: the 52 HTTP methods of a Solana node. The spec's two keep the
 * spec's 160 credits; the others are priced on the scale of `credits.ts`. Every read is idempotent and
 * may fail over, except the spec's two, which the spec does not name as failover-eligible; the two
 * writes are never sent twice.
 */
export const SOLANA_METHODS: readonly MethodDefinition[] = [
  // --- The spec's methods -----------------------------------------------------------------------
  { ...read('getAccountInfo', positional([pubkey, accountInfoConfig], 1), ['address', 'config'], C.oneRead, 'An account: lamports, owner, data (base58, base64, base64+zstd or jsonParsed), executable, rent epoch, space; null when it does not exist.'), failover: false },
  { ...read('getClusterNodes', noParams, [], C.oneRead, "The nodes of the cluster: each node's public key, gossip, TPU and RPC addresses, software version, feature set and shred version."), failover: false },
  // --- Node status: answered from memory --------------------------------------------------------
  read('getHealth', noParams, [], C.status, '"ok" when the node is healthy; an error (-32005) when it is behind.'),
  read('getSlot', positional([contextConfig], 0), ['config'], C.status, 'The slot the node has reached at a commitment level (default finalized).'),
  read('getVersion', noParams, [], C.status, "The node's software version (`solana-core`) and feature-set identifier (`feature-set`)."),
  read('getBlockHeight', positional([contextConfig], 0), ['config'], C.status, 'The block height at a commitment level.'),
  read('getEpochInfo', positional([contextConfig], 0), ['config'], C.status, 'The current epoch: its number, slot index, slots in it, absolute slot, block height, transaction count.'),
  read('getEpochSchedule', noParams, [], C.status, "The cluster's epoch schedule."),
  read('getGenesisHash', noParams, [], C.status, 'The genesis hash.'),
  read('getIdentity', noParams, [], C.status, "The node's identity public key."),
  read('getFirstAvailableBlock', noParams, [], C.status, 'The lowest slot the node has a block for.'),
  read('minimumLedgerSlot', noParams, [], C.status, 'The lowest slot the node has information about in its ledger.'),
  read('getMaxRetransmitSlot', noParams, [], C.status, 'The highest slot seen by the retransmit stage.'),
  read('getMaxShredInsertSlot', noParams, [], C.status, 'The highest slot seen after shred insert.'),
  read('getHighestSnapshotSlot', noParams, [], C.status, 'The highest full (and incremental) snapshot slot the node has.'),
  read('getSlotLeader', positional([contextConfig], 0), ['config'], C.status, 'The current slot leader.'),
  read('getTransactionCount', positional([contextConfig], 0), ['config'], C.status, 'The number of transactions processed since genesis.'),
  read('getInflationGovernor', positional([commitmentConfig], 0), ['config'], C.status, 'The inflation governor.'),
  read('getInflationRate', noParams, [], C.status, 'The inflation rates of the current epoch.'),
  read('getStakeMinimumDelegation', positional([commitmentConfig], 0), ['config'], C.status, 'The minimum stake delegation, in lamports.'),
  read('getMinimumBalanceForRentExemption', positional([u64, commitmentConfig], 0), ['dataLength', 'config'], C.status, 'The lamports an account of that size needs to be rent exempt.'),
  // --- Recent chain state -----------------------------------------------------------------------
  read('getLatestBlockhash', positional([contextConfig], 0), ['config'], C.chainState, 'The latest blockhash and the last block height at which it is valid.'),
  read('isBlockhashValid', positional([blockhash, contextConfig], 1), ['blockhash', 'config'], C.chainState, 'Whether a blockhash is still valid.'),
  read('getFeeForMessage', positional([{ type: 'string', minLength: 1, description: 'a base-64 encoded message' }, contextConfig], 1), ['message', 'config'], C.chainState, 'The fee the network charges for a message (null when its blockhash expired).'),
  read('getBlockTime', positional([u64], 1), ['slot'], C.chainState, 'The estimated production time of a block, as a Unix timestamp.'),
  read('getBlockCommitment', positional([u64], 1), ['slot'], C.chainState, 'The commitment of a block: stake voted at each lockout depth, and the total active stake.'),
  read('getRecentPerformanceSamples', positional([u64UpTo(MAX_PERFORMANCE_SAMPLES)], 0), ['limit'], C.chainState, 'Recent performance samples (at most 720), newest first.'),
  read('getRecentPrioritizationFees', positional([pubkeys(MAX_PRIORITIZATION_FEE_ACCOUNTS)], 0), ['addresses'], C.chainState, 'Prioritization fees of recent blocks, for transactions that lock the given accounts (at most 128).'),
  read('getInflationReward', positional([pubkeys(MAX_MULTIPLE_ACCOUNTS), { type: ['object', 'null'], properties: { commitment, epoch: slotOrNull, minContextSlot: slotOrNull } }], 1), ['addresses', 'config'], C.oneRead, 'The inflation rewards of addresses (at most 100) for an epoch.'),
  // --- One account or one transaction -----------------------------------------------------------
  read('getBalance', positional([pubkey, contextConfig], 1), ['address', 'config'], C.oneRead, 'The lamports of an account.'),
  read('getTokenAccountBalance', positional([pubkey, commitmentConfig], 1), ['address', 'config'], C.oneRead, 'The token balance of an SPL token account.'),
  read('getTokenSupply', positional([pubkey, commitmentConfig], 1), ['mint', 'config'], C.oneRead, 'The total supply of an SPL token mint.'),
  read('getTransaction', positional([signature, transactionConfig], 1), ['signature', 'config'], C.oneRead, 'A confirmed transaction by signature; null when the node has none.'),
  read('getSignatureStatuses', positional([{ type: 'array', items: signature, maxItems: MAX_SIGNATURE_STATUSES }, { type: ['object', 'null'], properties: { searchTransactionHistory: { type: ['boolean', 'null'] } } }], 1), ['signatures', 'config'], C.oneRead, 'The statuses of signatures (at most 256).'),
  // --- Lists bounded per call -------------------------------------------------------------------
  read('getMultipleAccounts', positional([pubkeys(MAX_MULTIPLE_ACCOUNTS), accountInfoConfig], 1), ['addresses', 'config'], C.list, 'Several accounts (at most 100) at once, in the order asked; null for each that does not exist.'),
  read('getSignaturesForAddress', positional([pubkey, signaturesForAddressConfig], 1), ['address', 'config'], C.list, 'Signatures of transactions that touched an address, newest first (at most `limit`, at most 1,000).'),
  read('getBlock', positional([u64, blockConfig], 1), ['slot', 'config'], C.list, 'A confirmed block: its hashes, parent slot, transactions, rewards, time and height.'),
  read('getBlocks', positional([u64, endSlotOrConfig, { type: ['object', 'null'], properties: { commitment: confirmedCommitment } }], 1), ['startSlot', 'endSlot', 'config'], C.list, 'The confirmed blocks between two slots (a range of at most 500,000 slots).'),
  read('getBlocksWithLimit', positional([u64, u64UpTo(MAX_BLOCKS_RANGE), { type: ['object', 'null'], properties: { commitment: confirmedCommitment } }], 2), ['startSlot', 'limit', 'config'], C.list, 'At most `limit` (at most 500,000) confirmed blocks from a slot.'),
  read('getSlotLeaders', positional([u64, { type: 'integer', minimum: 1, maximum: MAX_SLOT_LEADERS }], 2), ['startSlot', 'limit'], C.list, 'The leaders of a range of slots (at most 5,000).'),
  read('getLeaderSchedule', positional([slotOrLeaderConfig, { type: ['object', 'null'], properties: { commitment, identity: pubkey } }], 0), ['slot', 'config'], C.list, 'The leader schedule of an epoch.'),
  read('getBlockProduction', positional([{ type: ['object', 'null'], properties: { commitment, identity: pubkey, range: { type: 'object', required: ['firstSlot'], properties: { firstSlot: u64, lastSlot: slotOrNull } } } }], 0), ['config'], C.list, 'Block production of the current or a given slot range, per validator.'),
  read('getVoteAccounts', positional([{ type: ['object', 'null'], properties: { commitment, votePubkey: pubkey, keepUnstakedDelinquents: { type: ['boolean', 'null'] }, delinquentSlotDistance: slotOrNull } }], 0), ['config'], C.list, 'The current and delinquent vote accounts.'),
  read('getTokenLargestAccounts', positional([pubkey, commitmentConfig], 1), ['mint', 'config'], C.list, 'The 20 largest accounts of an SPL token.'),
  // --- Scans of the accounts database -----------------------------------------------------------
  read('getProgramAccounts', positional([pubkey, programAccountsConfig], 1), ['programId', 'config'], C.scan, 'The accounts a program owns, filtered (at most 4 filters); the answer is refused beyond the result cap.'),
  read('getLargestAccounts', positional([{ type: ['object', 'null'], properties: { commitment, filter: { enum: ['circulating', 'nonCirculating', null] } } }], 0), ['config'], C.scan, 'The 20 largest accounts by lamports.'),
  read('getSupply', positional([{ type: ['object', 'null'], properties: { commitment, excludeNonCirculatingAccountsList: { type: ['boolean', 'null'] } } }], 0), ['config'], C.scan, 'The supply: total, circulating, non-circulating and the non-circulating accounts.'),
  read('getTokenAccountsByOwner', positional([pubkey, tokenAccountsFilter, tokenAccountsConfig], 2), ['owner', 'filter', 'config'], C.scan, 'The SPL token accounts of an owner, by mint or token program.'),
  read('getTokenAccountsByDelegate', positional([pubkey, tokenAccountsFilter, tokenAccountsConfig], 2), ['delegate', 'filter', 'config'], C.scan, 'The SPL token accounts of a delegate, by mint or token program.'),
  // --- A transaction executed, not sent ---------------------------------------------------------
  read('simulateTransaction', positional([wireTransaction, simulateTransactionConfig], 1), ['transaction', 'config'], C.simulate, 'Executes a transaction without sending it: its logs, units consumed, error, return data and the accounts asked for.'),
  // --- Writes: never sent twice -----------------------------------------------------------------
  {
    name: 'sendTransaction',
    params: positional([wireTransaction, sendTransactionConfig], 1),
    paramNames: ['transaction', 'config'],
    credits: C.write,
    failover: false,
    idempotent: false,
    description: 'Submits a signed transaction; answers its first signature. Never sent twice: a failed attempt is not retried on another node.',
  },
  {
    name: 'requestAirdrop',
    params: positional([pubkey, u64, commitmentConfig], 2),
    paramNames: ['address', 'lamports', 'config'],
    credits: C.write,
    failover: false,
    idempotent: false,
    description: "Asks the node's faucet for lamports: off unless the network enables it (`options.airdrop`).",
  },
];
