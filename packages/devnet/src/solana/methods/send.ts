/**
 * Writes: `sendTransaction` (preflight-simulated unless skipped), `simulateTransaction`, `requestAirdrop`.
 *
 * @module
 */
import bs58 from 'bs58';
import { encodeAccount } from '../account-encoding.js';
import { emptyOutcome, execute, simulate, blockhashIsRecent, type ExecutionOutcome } from '../ledger/executor.js';
import { faucetTransfer, openFaucet, type Faucet } from '../ledger/faucet.js';
import { MAX_PROCESSING_AGE } from '../ledger/ledger.js';
import { transactionErrorMessage } from '../ledger/transaction-error.js';
import { decodeWireTransaction, MalformedTransaction, type WireTransaction } from '../ledger/wire-transaction.js';
import type { LiteSvmNode } from '../litesvm-node.js';
import { RpcError } from '../rpc-error.js';
import { positional, readConfig, readString, readU64, readVariant, serdeError, unexpected } from '../serde-params.js';
import { ACCOUNT_ENCODINGS } from './accounts.js';
import { contextSlot, readBool, readStringList, verifyPubkey, withContext, type MethodContext } from './common.js';

/** agave's `MAX_BASE58_SIZE` / `MAX_BASE64_SIZE` of an encoded transaction (a 1,232-byte packet). */
const MAX_ENCODED = { base58: 1683, base64: 1644 } as const;
const PACKET_DATA_SIZE = 1232;

function decodeParam(text: string, encoding: 'base58' | 'base64'): WireTransaction {
  if (text.length > MAX_ENCODED[encoding]) {
    throw RpcError.invalidParams(`${encoding} encoded solana_transaction::versioned::VersionedTransaction too large: ${text.length} bytes (max: encoded/raw ${MAX_ENCODED[encoding]}/${PACKET_DATA_SIZE})`);
  }
  let bytes: Uint8Array;
  try {
    bytes = encoding === 'base58' ? bs58.decode(text) : Buffer.from(text, 'base64');
    if (encoding === 'base64' && Buffer.from(bytes).toString('base64') !== text) throw new Error('Invalid padding');
  } catch (error) {
    throw RpcError.invalidParams(`invalid ${encoding} encoding: ${(error as Error).message}`);
  }
  try {
    return decodeWireTransaction(bytes);
  } catch (error) {
    if (error instanceof MalformedTransaction) throw RpcError.invalidParams(`failed to deserialize solana_transaction::versioned::VersionedTransaction: ${error.message}`);
    throw error;
  }
}

function readTransactionParam(params: unknown, struct: string): { tx: WireTransaction; config: Record<string, unknown> | undefined } {
  const [encoded, rawConfig] = positional(params, 1, 2);
  const text = readString(encoded);
  const config = readConfig(rawConfig, struct);
  const encoding = readVariant(config?.encoding, ['binary', 'base64', 'base58', 'json', 'jsonParsed'] as const) ?? 'base58';
  if (encoding === 'json' || encoding === 'jsonParsed') throw RpcError.invalidParams(`unsupported encoding: ${encoding}. Supported encodings: base58, base64`);
  return { tx: decodeParam(text, encoding === 'base64' ? 'base64' : 'base58'), config };
}

/** agave's `RpcSimulateTransactionResult` of an outcome. */
function simulationResult(outcome: ExecutionOutcome, extra: { accounts?: unknown; innerInstructions?: unknown; replacementBlockhash?: unknown } = {}): Record<string, unknown> {
  return {
    err: outcome.err,
    logs: outcome.logs,
    accounts: extra.accounts ?? null,
    unitsConsumed: outcome.unitsConsumed,
    returnData: outcome.returnData === undefined ? null : { programId: outcome.returnData.programId, data: [Buffer.from(outcome.returnData.data).toString('base64'), 'base64'] },
    innerInstructions: extra.innerInstructions ?? null,
    replacementBlockhash: extra.replacementBlockhash ?? null,
  };
}

function sendTransaction(params: unknown, { node }: MethodContext): unknown {
  const { tx, config } = readTransactionParam(params, 'RpcSendTransactionConfig');
  const skipPreflight = readBool(config?.skipPreflight) ?? false;
  readU64(config?.maxRetries, 'usize');
  contextSlot(node, config === undefined ? undefined : { commitment: config.preflightCommitment, minContextSlot: config.minContextSlot });
  const signature = tx.signatures[0]!;
  if (!skipPreflight) {
    const preflight = preflightOutcome(node, tx);
    if (preflight === 'badSignature') throw new RpcError(-32003, 'Transaction signature verification failure');
    if (preflight.err !== null) throw new RpcError(-32002, `Transaction simulation failed: ${transactionErrorMessage(preflight.err)}`, simulationResult(preflight));
  }
  execute(node, tx);
  return signature;
}

function preflightOutcome(node: LiteSvmNode, tx: WireTransaction): ExecutionOutcome | 'badSignature' {
  if (node.ledger.transaction(tx.signatures[0]!) !== undefined) return emptyOutcome('AlreadyProcessed');
  if (!blockhashIsRecent(node, tx)) return emptyOutcome('BlockhashNotFound');
  const outcome = simulate(node, tx, true);
  return outcome.err === 'SignatureFailure' ? 'badSignature' : outcome;
}

async function simulateTransaction(params: unknown, { node }: MethodContext): Promise<unknown> {
  const { tx: given, config } = readTransactionParam(params, 'RpcSimulateTransactionConfig');
  const sigVerify = readBool(config?.sigVerify) ?? false;
  const replace = readBool(config?.replaceRecentBlockhash) ?? false;
  const wantInner = readBool(config?.innerInstructions) ?? false;
  const accountsConfig = readConfig(config?.accounts, 'RpcSimulateTransactionAccountsConfig');
  const accountEncoding = readVariant(accountsConfig?.encoding, ACCOUNT_ENCODINGS) ?? 'base64';
  const addresses = accountsConfig === undefined ? undefined : readStringList(accountsConfig.addresses).map(verifyPubkey);
  if (sigVerify && replace) throw RpcError.invalidParams('sigVerify may not be used with replaceRecentBlockhash');
  if (accountEncoding === 'binary' || accountEncoding === 'base58') throw RpcError.invalidParams(`Invalid encoding: ${accountEncoding}`);
  const slot = contextSlot(node, config);
  let tx = given;
  let replacementBlockhash: unknown;
  if (replace) {
    const latest = node.latestBlockhash(config === undefined ? 'finalized' : commitmentOfConfig(config));
    const bytes = Buffer.from(given.bytes);
    Buffer.from(bs58.decode(latest.blockhash)).copy(bytes, given.blockhashOffset);
    tx = decodeWireTransaction(bytes);
    replacementBlockhash = { blockhash: latest.blockhash, lastValidBlockHeight: node.ledger.blockHeight(latest.slot) + BigInt(MAX_PROCESSING_AGE) };
  }
  if (!replace && !blockhashIsRecent(node, tx)) return withContext(node, slot, simulationResult(emptyOutcome('BlockhashNotFound')));
  const outcome = simulate(node, tx, sigVerify);
  if (sigVerify && outcome.err === 'SignatureFailure') throw new RpcError(-32003, 'Transaction signature verification failure');
  const accounts = addresses === undefined ? undefined : await Promise.all(addresses.map(async (address) => {
    const account = outcome.post.get(address) ?? node.getAccount(address);
    return account === null || account.lamports === 0n ? null : encodeAccount(node, address, account, accountEncoding, undefined);
  }));
  const innerInstructions = wantInner ? outcome.innerInstructions : undefined;
  return withContext(node, slot, simulationResult(outcome, { accounts, innerInstructions, replacementBlockhash }));
}

function commitmentOfConfig(config: Record<string, unknown>): 'processed' | 'confirmed' | 'finalized' {
  const c = config.commitment;
  return c === 'processed' || c === 'confirmed' ? c : 'finalized';
}

const faucets = new WeakMap<LiteSvmNode, Faucet>();

function requestAirdrop(params: unknown, { node }: MethodContext): unknown {
  const [address, amount, rawConfig] = positional(params, 2, 3);
  const pubkey = verifyPubkey(readString(address));
  if (typeof amount !== 'number' || !Number.isInteger(amount) || amount < 0) throw serdeError(`invalid type: ${unexpected(amount)}, expected u64`);
  contextSlot(node, readConfig(rawConfig, 'RpcRequestAirdropConfig'));
  let faucet = faucets.get(node);
  if (faucet === undefined) {
    faucet = openFaucet(node, node.identity);
    faucets.set(node, faucet);
  }
  // The same airdrop twice on one blockhash would be the same transaction: step back to an older, still valid one.
  const head = node.slot('processed');
  let at = head;
  let tx = faucetTransfer(faucet, pubkey, BigInt(amount), node.ledger.blockhash(at));
  while (node.ledger.transaction(tx.signatures[0]!) !== undefined && at > node.ledger.firstSlot && head - at < BigInt(MAX_PROCESSING_AGE)) {
    at -= 1n;
    tx = faucetTransfer(faucet, pubkey, BigInt(amount), node.ledger.blockhash(at));
  }
  const outcome = execute(node, tx);
  if ('dropped' in outcome) throw new RpcError(-32600, `Airdrop failed: ${transactionErrorMessage(outcome.dropped.err)}`);
  if (outcome.record.err !== null) throw new RpcError(-32600, `Airdrop failed: ${transactionErrorMessage(outcome.record.err)}`);
  return outcome.record.signature;
}

/** The write methods by name. */
export const SEND_METHODS = { sendTransaction, simulateTransaction, requestAirdrop };
