/**
 * Runs raw transactions through the node's LiteSVM: checks the blockhash's age against the ledger,
 * executes, and records what landed in the head block with its status meta.
 *
 * @module
 */
import bs58 from 'bs58';
import { FailedTransactionMetadata, type TransactionMetadata } from 'litesvm';
import type { LiteSvmNode } from '../litesvm-node.js';
import { computeBudget, transactionFee } from './fees.js';
import { isSplTokenProgram, mintDecimals, tokenAccountMint, uiTokenAmount } from '../parsers/token.js';
import { MAX_PROCESSING_AGE, type InnerInstructionRecord, type TokenBalance, type TransactionRecord } from './ledger.js';
import { transactionErrorJson } from './transaction-error.js';
import { isWritable, type WireTransaction } from './wire-transaction.js';

/** What a run of a transaction gives, landed or not. */
export interface ExecutionOutcome {
  /** agave's JSON of the error, or null. */
  readonly err: unknown;
  /** Log lines. */
  readonly logs: readonly string[];
  /** Compute units consumed. */
  readonly unitsConsumed: bigint;
  /** Inner instructions by outer index. */
  readonly innerInstructions: TransactionRecord['innerInstructions'];
  /** Return data, if any. */
  readonly returnData: TransactionRecord['returnData'];
}

/** The transaction never reaches a block: these errors make a leader drop it. */
const DROPPED = new Set(['AccountInUse', 'AccountLoadedTwice', 'AccountNotFound', 'InsufficientFundsForFee', 'InvalidAccountForFee',
  'AlreadyProcessed', 'BlockhashNotFound', 'MissingSignatureForFee', 'SignatureFailure', 'SanitizeFailure', 'UnsupportedVersion',
  'AddressLookupTableNotFound', 'InvalidAddressLookupTableOwner', 'InvalidAddressLookupTableData', 'InvalidAddressLookupTableIndex']);

/** Whether the blockhash of `tx` is one of the last 150 blocks' (or a durable nonce is advanced first). */
export function blockhashIsRecent(node: LiteSvmNode, tx: WireTransaction): boolean {
  const at = node.ledger.blockhashSlot(tx.recentBlockhash);
  if (at !== undefined && node.slot('processed') - at <= BigInt(MAX_PROCESSING_AGE)) return true;
  const first = tx.instructions[0];
  // SystemInstruction::AdvanceNonceAccount (4) first: a durable-nonce transaction, whose "blockhash" is the nonce.
  return first !== undefined && tx.accountKeys[first.programIdIndex] === '11111111111111111111111111111111' && Buffer.from(first.data).readUInt32LE(0) === 4;
}

function outcome(err: unknown, meta: TransactionMetadata): ExecutionOutcome {
  const returned = meta.returnData();
  const returnedData = returned.data();
  return {
    err,
    logs: meta.logs(),
    unitsConsumed: meta.computeUnitsConsumed(),
    innerInstructions: meta.innerInstructions()
      .map((list, index) => ({
        index,
        instructions: list.map((inner): InnerInstructionRecord => {
          const ix = inner.instruction();
          return { programIdIndex: ix.programIdIndex(), accounts: [...ix.accounts()], data: bs58.encode(ix.data()), stackHeight: inner.stackHeight() };
        }),
      }))
      .filter((entry) => entry.instructions.length > 0),
    returnData: returnedData.length === 0 ? undefined : { programId: bs58.encode(returned.programId()), data: returnedData },
  };
}

function read(result: unknown): ExecutionOutcome {
  if (result instanceof FailedTransactionMetadata) return outcome(transactionErrorJson(result.err()), result.meta());
  const meta = (result as { meta?: () => TransactionMetadata }).meta?.() ?? (result as TransactionMetadata);
  return outcome(null, meta);
}

function balances(node: LiteSvmNode, tx: WireTransaction): bigint[] {
  return tx.accountKeys.map((key) => node.getAccount(key)?.lamports ?? 0n);
}

/** agave's `UiTransactionTokenBalance`s: the token accounts among the static keys, with their mint's decimals. */
function tokenBalances(node: LiteSvmNode, tx: WireTransaction): TokenBalance[] {
  const out: TokenBalance[] = [];
  tx.accountKeys.forEach((key, accountIndex) => {
    const account = node.getAccount(key);
    if (account === null || !isSplTokenProgram(account.owner)) return;
    const mint = tokenAccountMint(account.data);
    const mintAccount = mint === undefined ? null : node.getAccount(mint);
    const decimals = mintAccount === null ? undefined : mintDecimals(mintAccount.data);
    if (mint === undefined || decimals === undefined) return;
    const data = Buffer.from(account.data);
    out.push({ accountIndex, mint, uiTokenAmount: uiTokenAmount(data.readBigUInt64LE(64), decimals), owner: bs58.encode(data.subarray(32, 64)), programId: account.owner });
  });
  return out;
}

/**
 * Executes `tx` in the head block. Returns the record when it landed (failed ones land too, as on a
 * cluster, when their fee could be charged), or the outcome of a transaction the leader drops.
 */
export function execute(node: LiteSvmNode, tx: WireTransaction): { record: TransactionRecord } | { dropped: ExecutionOutcome } {
  const signature = tx.signatures[0]!;
  if (node.ledger.transaction(signature) !== undefined) return { dropped: emptyOutcome('AlreadyProcessed') };
  if (!blockhashIsRecent(node, tx)) return { dropped: emptyOutcome('BlockhashNotFound') };
  const preBalances = balances(node, tx);
  const preTokenBalances = tokenBalances(node, tx);
  const raw = tx.version === 'legacy' ? node.inner.sendLegacyTransaction(tx.bytes) : node.inner.sendVersionedTransaction(tx.bytes);
  const result = read(raw);
  if (typeof result.err === 'string' && DROPPED.has(result.err)) return { dropped: result };
  const postBalances = balances(node, tx);
  const fee = result.err === null || postBalances[0] !== preBalances[0] ? transactionFee(tx) : 0n;
  const record: TransactionRecord = {
    signature, slot: node.slot('processed'), tx, err: result.err, fee, preBalances, postBalances, preTokenBalances,
    postTokenBalances: tokenBalances(node, tx),
    logs: result.logs, innerInstructions: result.innerInstructions, computeUnitsConsumed: result.unitsConsumed,
    returnData: result.returnData, computeUnitPrice: computeBudget(tx).price,
  };
  node.ledger.add(record);
  node.events.emit('transaction', record);
  node.events.emit('accounts', tx.accountKeys.filter((_, i) => isWritable(tx, i)));
  return { record };
}

/** An outcome with no execution: an error found before the VM ran. */
export function emptyOutcome(err: unknown): ExecutionOutcome {
  return { err, logs: [], unitsConsumed: 0n, innerInstructions: [], returnData: undefined };
}

/** Simulates `tx` (signatures checked only with `sigVerify`); the post-state of its accounts by address. */
export function simulate(node: LiteSvmNode, tx: WireTransaction, sigVerify: boolean): ExecutionOutcome & { post: Map<string, { lamports: bigint; data: Uint8Array; owner: string; executable: boolean; rentEpoch: bigint }> } {
  node.inner.setSigverify(sigVerify);
  let raw: unknown;
  try {
    raw = tx.version === 'legacy' ? node.inner.simulateLegacyTransaction(tx.bytes) : node.inner.simulateVersionedTransaction(tx.bytes);
  } finally {
    node.inner.setSigverify(true);
  }
  const post = new Map<string, { lamports: bigint; data: Uint8Array; owner: string; executable: boolean; rentEpoch: bigint }>();
  if (!(raw instanceof FailedTransactionMetadata)) {
    for (const entry of (raw as { postAccounts(): Array<{ address: Uint8Array; account(): import('litesvm').Account }> }).postAccounts()) {
      const a = entry.account();
      post.set(bs58.encode(entry.address), { lamports: a.lamports(), data: a.data(), owner: bs58.encode(a.owner()), executable: a.executable(), rentEpoch: a.rentEpoch() });
    }
  }
  return { ...read(raw), post };
}
