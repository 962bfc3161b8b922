/**
 * The result shapes of Solana's HTTP methods as the published RPC documentation
 * (https://solana.com/docs/rpc/http) describes them, in a small shape language:
 * - a string names a leaf type: `u64`, `i64`, `f64`, `string`, `base58`, `bool`, `null`, `any`;
 * - `[shape]` is an array of that shape; an object lists its members, `key?` when it may be absent;
 * - `oneOf(...)` takes any of its shapes.
 */
export type Shape = string | readonly [Shape] | { readonly [key: string]: Shape } | OneOf;

/** Any of several shapes. */
export class OneOf {
  constructor(readonly shapes: readonly Shape[]) {}
}
const oneOf = (...shapes: Shape[]): OneOf => new OneOf(shapes);
const nullable = (shape: Shape): OneOf => oneOf(shape, 'null');
const ctx = (value: Shape): Shape => ({ context: { slot: 'u64', apiVersion: 'string' }, value });

const UI_ACCOUNT: Shape = {
  lamports: 'u64',
  data: oneOf('string', ['string'], { program: 'string', parsed: 'any', space: 'u64' }),
  owner: 'base58', executable: 'bool', rentEpoch: 'u64', space: 'u64',
};
const KEYED_ACCOUNT: Shape = { pubkey: 'base58', account: UI_ACCOUNT };
const TOKEN_AMOUNT: Shape = { uiAmount: nullable('f64'), decimals: 'u64', amount: 'string', uiAmountString: 'string' };
const INSTRUCTION: Shape = oneOf(
  { programIdIndex: 'u64', accounts: ['u64'], data: 'string', stackHeight: nullable('u64') },
  { program: 'string', programId: 'base58', parsed: 'any', stackHeight: nullable('u64') },
  { programId: 'base58', accounts: ['base58'], data: 'string', stackHeight: nullable('u64') },
);
const LOOKUPS: Shape = [{ accountKey: 'base58', writableIndexes: ['u64'], readonlyIndexes: ['u64'] }];
const TRANSACTION: Shape = oneOf(
  ['string'],
  {
    signatures: ['base58'],
    message: oneOf(
      { header: { numRequiredSignatures: 'u64', numReadonlySignedAccounts: 'u64', numReadonlyUnsignedAccounts: 'u64' }, accountKeys: ['base58'], recentBlockhash: 'base58', instructions: [INSTRUCTION], 'addressTableLookups?': LOOKUPS },
      { accountKeys: [{ pubkey: 'base58', writable: 'bool', signer: 'bool', source: 'string' }], recentBlockhash: 'base58', instructions: [INSTRUCTION], 'addressTableLookups?': LOOKUPS },
    ),
  },
);
const META: Shape = {
  err: 'any', status: 'any', fee: 'u64', preBalances: ['u64'], postBalances: ['u64'],
  innerInstructions: [{ index: 'u64', instructions: [INSTRUCTION] }], logMessages: ['string'],
  preTokenBalances: ['any'], postTokenBalances: ['any'], rewards: ['any'],
  'loadedAddresses?': { writable: ['base58'], readonly: ['base58'] }, 'returnData?': 'any', computeUnitsConsumed: 'u64',
};
const TX_WITH_META: Shape = { transaction: TRANSACTION, meta: META, 'version?': oneOf('string', 'u64') };
const ACCOUNTS_TX: Shape = {
  transaction: { signatures: ['base58'], accountKeys: [{ pubkey: 'base58', writable: 'bool', signer: 'bool', source: 'string' }] },
  meta: { err: 'any', status: 'any', fee: 'u64', preBalances: ['u64'], postBalances: ['u64'], preTokenBalances: ['any'], postTokenBalances: ['any'] },
  'version?': oneOf('string', 'u64'),
};
const SIMULATION: Shape = {
  err: 'any', logs: nullable(['string']), accounts: nullable([nullable(UI_ACCOUNT)]), unitsConsumed: 'u64',
  returnData: 'any', innerInstructions: 'any', replacementBlockhash: nullable({ blockhash: 'base58', lastValidBlockHeight: 'u64' }),
};

/** The documented result shape of each method. */
export const SOLANA_RESULT_SHAPES: Readonly<Record<string, Shape>> = {
  getAccountInfo: ctx(nullable(UI_ACCOUNT)),
  getBalance: ctx('u64'),
  getBlock: {
    previousBlockhash: 'base58', blockhash: 'base58', parentSlot: 'u64', 'transactions?': [oneOf(TX_WITH_META, ACCOUNTS_TX)],
    'signatures?': ['base58'], 'rewards?': ['any'], blockTime: nullable('i64'), blockHeight: nullable('u64'),
  },
  getBlockCommitment: { commitment: nullable(['u64']), totalStake: 'u64' },
  getBlockHeight: 'u64',
  getBlockProduction: ctx({ byIdentity: 'any', range: { firstSlot: 'u64', lastSlot: 'u64' } }),
  getBlocks: ['u64'],
  getBlocksWithLimit: ['u64'],
  getBlockTime: 'i64',
  getClusterNodes: [{
    pubkey: 'base58', gossip: nullable('string'), tvu: nullable('string'), tpu: nullable('string'), tpuQuic: nullable('string'),
    tpuForwards: nullable('string'), tpuForwardsQuic: nullable('string'), tpuVote: nullable('string'), serveRepair: nullable('string'),
    rpc: nullable('string'), pubsub: nullable('string'), version: nullable('string'), featureSet: nullable('u64'), shredVersion: nullable('u64'),
    'clientId?': 'string',
  }],
  getEpochInfo: { absoluteSlot: 'u64', blockHeight: 'u64', epoch: 'u64', slotIndex: 'u64', slotsInEpoch: 'u64', transactionCount: nullable('u64') },
  getEpochSchedule: { slotsPerEpoch: 'u64', leaderScheduleSlotOffset: 'u64', warmup: 'bool', firstNormalEpoch: 'u64', firstNormalSlot: 'u64' },
  getFeeForMessage: ctx(nullable('u64')),
  getFirstAvailableBlock: 'u64',
  getGenesisHash: 'base58',
  getHealth: 'string',
  getHighestSnapshotSlot: { full: 'u64', incremental: nullable('u64') },
  getIdentity: { identity: 'base58' },
  getInflationGovernor: { initial: 'f64', terminal: 'f64', taper: 'f64', foundation: 'f64', foundationTerm: 'f64' },
  getInflationRate: { total: 'f64', validator: 'f64', foundation: 'f64', epoch: 'u64' },
  getInflationReward: [nullable({ epoch: 'u64', effectiveSlot: 'u64', amount: 'u64', postBalance: 'u64', commission: nullable('u64') })],
  getLargestAccounts: ctx([{ lamports: 'u64', address: 'base58' }]),
  getLatestBlockhash: ctx({ blockhash: 'base58', lastValidBlockHeight: 'u64' }),
  getLeaderSchedule: nullable('any'),
  getMaxRetransmitSlot: 'u64',
  getMaxShredInsertSlot: 'u64',
  getMinimumBalanceForRentExemption: 'u64',
  getMultipleAccounts: ctx([nullable(UI_ACCOUNT)]),
  getProgramAccounts: oneOf([KEYED_ACCOUNT], ctx([KEYED_ACCOUNT])),
  getRecentPerformanceSamples: [{ slot: 'u64', numTransactions: 'u64', numNonVoteTransactions: nullable('u64'), numSlots: 'u64', samplePeriodSecs: 'u64' }],
  getRecentPrioritizationFees: [{ slot: 'u64', prioritizationFee: 'u64' }],
  getSignaturesForAddress: [{ signature: 'base58', slot: 'u64', err: 'any', memo: nullable('string'), blockTime: nullable('i64'), confirmationStatus: nullable('string') }],
  getSignatureStatuses: ctx([nullable({ slot: 'u64', confirmations: nullable('u64'), status: 'any', err: 'any', confirmationStatus: nullable('string') })]),
  getSlot: 'u64',
  getSlotLeader: 'base58',
  getSlotLeaders: ['base58'],
  getStakeMinimumDelegation: ctx('u64'),
  getSupply: ctx({ total: 'u64', circulating: 'u64', nonCirculating: 'u64', nonCirculatingAccounts: ['base58'] }),
  getTokenAccountBalance: ctx(TOKEN_AMOUNT),
  getTokenAccountsByDelegate: ctx([KEYED_ACCOUNT]),
  getTokenAccountsByOwner: ctx([KEYED_ACCOUNT]),
  getTokenLargestAccounts: ctx([{ address: 'base58', uiAmount: nullable('f64'), decimals: 'u64', amount: 'string', uiAmountString: 'string' }]),
  getTokenSupply: ctx(TOKEN_AMOUNT),
  getTransaction: nullable({ slot: 'u64', transaction: TRANSACTION, meta: nullable(META), 'version?': oneOf('string', 'u64'), blockTime: nullable('i64') }),
  getTransactionCount: 'u64',
  getVersion: { 'solana-core': 'string', 'feature-set': 'u64' },
  getVoteAccounts: {
    current: [{ votePubkey: 'base58', nodePubkey: 'base58', activatedStake: 'u64', epochVoteAccount: 'bool', epochCredits: [['u64']], commission: 'u64', lastVote: 'u64', rootSlot: 'u64' }],
    delinquent: ['any'],
  },
  isBlockhashValid: ctx('bool'),
  minimumLedgerSlot: 'u64',
  requestAirdrop: 'base58',
  sendTransaction: 'base58',
  simulateTransaction: ctx(SIMULATION),
};

/** The error codes a Solana node answers with: JSON-RPC's and agave's own (-32001…-32019). */
export const SOLANA_ERROR_CODES: ReadonlySet<number> = new Set([-32700, -32600, -32601, -32602, -32603, ...Array.from({ length: 19 }, (_, i) => -32001 - i)]);

const BASE58 = /^[1-9A-HJ-NP-Za-km-z]+$/;

/** The places where `value` departs from `shape` (empty when it fits), as `path: problem`. */
export function shapeProblems(value: unknown, shape: Shape, path = 'result'): string[] {
  if (shape instanceof OneOf) {
    const attempts = shape.shapes.map((s) => shapeProblems(value, s, path));
    return attempts.some((a) => a.length === 0) ? [] : attempts.sort((a, b) => a.length - b.length)[0]!;
  }
  if (typeof shape === 'string') {
    const ok = {
      any: true,
      null: value === null,
      bool: typeof value === 'boolean',
      string: typeof value === 'string',
      base58: typeof value === 'string' && BASE58.test(value),
      u64: typeof value === 'number' && Number.isInteger(value) && value >= 0,
      i64: typeof value === 'number' && Number.isInteger(value),
      f64: typeof value === 'number',
    }[shape];
    if (ok === undefined) return [`${path}: unknown shape ${shape}`];
    return ok ? [] : [`${path}: expected ${shape}, got ${JSON.stringify(value)?.slice(0, 60)}`];
  }
  if (Array.isArray(shape)) {
    if (!Array.isArray(value)) return [`${path}: expected an array`];
    return value.flatMap((item, i) => shapeProblems(item, shape[0] as Shape, `${path}[${i}]`));
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [`${path}: expected an object`];
  const members = shape as Record<string, Shape>;
  const problems: string[] = [];
  const known = new Set<string>();
  for (const [rawKey, member] of Object.entries(members)) {
    const optional = rawKey.endsWith('?');
    const key = optional ? rawKey.slice(0, -1) : rawKey;
    known.add(key);
    if (!(key in value)) { if (!optional) problems.push(`${path}.${key}: missing`); continue; }
    problems.push(...shapeProblems((value as Record<string, unknown>)[key], member, `${path}.${key}`));
  }
  for (const key of Object.keys(value)) if (!known.has(key)) problems.push(`${path}.${key}: not in the documented shape`);
  return problems;
}
