import type { SolanaScenario } from './solana-rpc-scenario.js';

/** One recorded call: why it is there, and its params. */
export interface RecordedCall {
  readonly comment: string;
  readonly params?: unknown[];
}

const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
const SYSTEM_PROGRAM = '11111111111111111111111111111111';

/**
 * The calls recorded for each of Solana's 52 HTTP methods against the scenario's node: each file is
 * replayed in order against a fresh scenario node (writes come last in their own files).
 */
export function solanaRecordingCalls(s: SolanaScenario): Readonly<Record<string, readonly RecordedCall[]>> {
  const seed = s.instance.getSeed();
  const payer = s.payer.publicKey.toBase58();
  const recipient = s.recipient.toBase58();
  const { airdrop, transfer, v0 } = s.signatures;
  const slot = s.transferSlot;
  return {
    getAccountInfo: [
      { comment: 'a wallet, base64', params: [seed.wallet.address, { encoding: 'base64' }] },
      { comment: 'no encoding: the legacy bare base-58 string', params: [seed.dataAccount.address] },
      { comment: 'a token account, jsonParsed', params: [seed.tokenAccount.address, { encoding: 'jsonParsed', commitment: 'confirmed' }] },
      { comment: 'base64+zstd with a data slice', params: [seed.dataAccount.address, { encoding: 'base64+zstd', dataSlice: { offset: 0, length: 4 } }] },
      { comment: 'no such account: value null', params: [seed.missing, { encoding: 'base64' }] },
      { comment: 'minContextSlot above the slot: -32016', params: [seed.wallet.address, { minContextSlot: 1_000_000 }] },
      { comment: 'not a pubkey: -32602', params: ['not-a-key'] },
    ],
    getBalance: [
      { comment: 'the recipient after two transfers', params: [recipient] },
      { comment: 'at processed', params: [payer, { commitment: 'processed' }] },
    ],
    getBlock: [
      { comment: 'the legacy transfer\'s block, json', params: [slot, { encoding: 'json', maxSupportedTransactionVersion: 0 }] },
      { comment: 'signatures only, no rewards', params: [slot, { transactionDetails: 'signatures', rewards: false }] },
      { comment: 'accounts only', params: [slot, { transactionDetails: 'accounts', maxSupportedTransactionVersion: 0 }] },
      { comment: 'the v0 transfer\'s block without maxSupportedTransactionVersion: -32015', params: [slot + 1] },
      { comment: 'above the confirmed slot: -32004', params: [1_000_000] },
      { comment: 'processed is refused', params: [slot, { commitment: 'processed' }] },
    ],
    getBlockCommitment: [{ comment: 'a finalized block: null commitment', params: [slot] }],
    getBlockHeight: [{ comment: 'finalized' }, { comment: 'processed', params: [{ commitment: 'processed' }] }],
    getBlockProduction: [{ comment: 'this epoch' }, { comment: 'a range', params: [{ range: { firstSlot: 0, lastSlot: 10 } }] }],
    getBlocks: [{ comment: 'a range', params: [slot - 2, slot + 2] }, { comment: 'too large a range', params: [0, 600_000] }],
    getBlocksWithLimit: [{ comment: 'five from the transfer', params: [slot, 5] }],
    getBlockTime: [{ comment: 'the transfer\'s block', params: [slot] }, { comment: 'not yet produced: -32004', params: [1_000_000] }],
    getClusterNodes: [{ comment: 'the one node' }],
    getEpochInfo: [{ comment: 'finalized' }, { comment: 'processed', params: [{ commitment: 'processed' }] }],
    getEpochSchedule: [{ comment: 'warmup schedule' }],
    getFeeForMessage: [{ comment: 'fee of a one-signature message', params: [messageOf(s.unsent)] }],
    getFirstAvailableBlock: [{ comment: 'genesis' }],
    getGenesisHash: [{ comment: 'the chain\'s' }],
    getHealth: [{ comment: 'ok' }],
    getHighestSnapshotSlot: [{ comment: 'the last full snapshot slot' }],
    getIdentity: [{ comment: 'the node\'s identity' }],
    getInflationGovernor: [{ comment: 'defaults' }],
    getInflationRate: [{ comment: 'this epoch' }],
    getInflationReward: [{ comment: 'the current epoch is refused', params: [[payer], { epoch: 5 }] }, { comment: 'no rewards', params: [[payer]] }],
    getLargestAccounts: [{ comment: 'top 20' }],
    getLatestBlockhash: [{ comment: 'finalized' }, { comment: 'processed', params: [{ commitment: 'processed' }] }],
    getLeaderSchedule: [{ comment: 'this epoch' }, { comment: 'another identity', params: [null, { identity: payer }] }],
    getMaxRetransmitSlot: [{ comment: 'the head' }],
    getMaxShredInsertSlot: [{ comment: 'the head' }],
    getMinimumBalanceForRentExemption: [{ comment: 'an empty account', params: [0] }, { comment: 'a token account', params: [165] }],
    getMultipleAccounts: [{ comment: 'payer, recipient, nobody', params: [[payer, recipient, seed.missing], { encoding: 'base64' }] }],
    getProgramAccounts: [
      { comment: 'token mints (dataSize 82)', params: [TOKEN_PROGRAM, { encoding: 'base64', filters: [{ dataSize: 82 }] }] },
      { comment: 'token accounts of the wallet (memcmp on the owner), jsonParsed, with context', params: [TOKEN_PROGRAM, { encoding: 'jsonParsed', withContext: true, filters: [{ dataSize: 165 }, { memcmp: { offset: 32, bytes: seed.wallet.address } }] }] },
    ],
    getRecentPerformanceSamples: [{ comment: 'one sample each 150 slots', params: [5] }],
    getRecentPrioritizationFees: [{ comment: 'the payer\'s blocks', params: [[payer]] }],
    getSignaturesForAddress: [
      { comment: 'the payer\'s history, newest first', params: [payer] },
      { comment: 'before the v0 transfer, limit 1', params: [payer, { before: v0, limit: 1 }] },
      { comment: 'a limit above 1000', params: [payer, { limit: 1001 }] },
    ],
    getSignatureStatuses: [{ comment: 'landed and unknown', params: [[airdrop, transfer, s.signatures.v0.replace(/.$/, (c) => (c === '1' ? '2' : '1'))], { searchTransactionHistory: true }] }],
    getSlot: [{ comment: 'finalized' }, { comment: 'confirmed', params: [{ commitment: 'confirmed' }] }],
    getSlotLeader: [{ comment: 'the node' }],
    getSlotLeaders: [{ comment: 'three', params: [slot, 3] }],
    getStakeMinimumDelegation: [{ comment: 'one SOL' }],
    getSupply: [{ comment: 'everything circulates', params: [{ excludeNonCirculatingAccountsList: true }] }],
    getTokenAccountBalance: [{ comment: 'the seed token account', params: [seed.tokenAccount.address] }, { comment: 'not a token account', params: [payer] }],
    getTokenAccountsByDelegate: [{ comment: 'none delegated', params: [payer, { programId: TOKEN_PROGRAM }, { encoding: 'jsonParsed' }] }],
    getTokenAccountsByOwner: [
      { comment: 'by mint, jsonParsed', params: [seed.wallet.address, { mint: seed.mint.address }, { encoding: 'jsonParsed' }] },
      { comment: 'by program, base64', params: [seed.wallet.address, { programId: TOKEN_PROGRAM }, { encoding: 'base64' }] },
    ],
    getTokenLargestAccounts: [{ comment: 'the seed mint', params: [seed.mint.address] }],
    getTokenSupply: [{ comment: 'the seed mint', params: [seed.mint.address] }],
    getTransaction: [
      { comment: 'the legacy transfer, json', params: [transfer, { encoding: 'json' }] },
      { comment: 'the legacy transfer, jsonParsed', params: [transfer, { encoding: 'jsonParsed', maxSupportedTransactionVersion: 0 }] },
      { comment: 'the legacy transfer, base64', params: [transfer, { encoding: 'base64' }] },
      { comment: 'the v0 transfer', params: [v0, { maxSupportedTransactionVersion: 0 }] },
      { comment: 'the v0 transfer without maxSupportedTransactionVersion: -32015', params: [v0] },
    ],
    getTransactionCount: [{ comment: 'finalized' }],
    getVersion: [{ comment: 'agave 2.0.15' }],
    getVoteAccounts: [{ comment: 'the one validator' }],
    isBlockhashValid: [{ comment: 'the head\'s', params: [s.blockhash, { commitment: 'processed' }] }, { comment: 'an unknown hash', params: [SYSTEM_PROGRAM] }],
    minimumLedgerSlot: [{ comment: 'genesis' }],
    requestAirdrop: [{ comment: 'one SOL to the recipient', params: [recipient, 1_000_000_000] }],
    sendTransaction: [
      { comment: 'a transfer', params: [s.unsent, { encoding: 'base64' }] },
      { comment: 'the same again: preflight says already processed (-32002)', params: [s.unsent, { encoding: 'base64' }] },
      { comment: 'from an account that does not exist: -32002 with the simulation', params: [s.unaffordable, { encoding: 'base64' }] },
      { comment: 'not base64', params: ['%%%', { encoding: 'base64' }] },
    ],
    simulateTransaction: [
      { comment: 'a transfer, with accounts', params: [s.unsent, { encoding: 'base64', accounts: { addresses: [recipient], encoding: 'base64' } }] },
      { comment: 'replaceRecentBlockhash', params: [s.unsent, { encoding: 'base64', replaceRecentBlockhash: true }] },
      { comment: 'an account that does not exist', params: [s.unaffordable, { encoding: 'base64' }] },
    ],
  };
}

/** The message bytes of a base64 one-signature transaction, base64. */
function messageOf(transaction: string): string {
  return Buffer.from(transaction, 'base64').subarray(1 + 64).toString('base64');
}
