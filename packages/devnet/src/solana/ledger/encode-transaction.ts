/**
 * A recorded transaction as agave's RPC shows it (`EncodedTransactionWithStatusMeta`): the transaction
 * in `json`, `jsonParsed`, `base58` or `base64`, its status meta, and its version.
 *
 * @module
 */
import bs58 from 'bs58';
import { RpcError } from '../rpc-error.js';
import type { TransactionRecord } from './ledger.js';
import { isSigner, isWritable, type WireTransaction } from './wire-transaction.js';

/** The transaction encodings agave takes. */
export type TransactionEncoding = 'json' | 'jsonParsed' | 'base58' | 'base64' | 'binary';

/** The transaction encodings, in agave's order. */
export const TRANSACTION_ENCODINGS: readonly TransactionEncoding[] = ['binary', 'base64', 'base58', 'json', 'jsonParsed'];

function rawMessage(tx: WireTransaction): Record<string, unknown> {
  return {
    header: tx.header,
    accountKeys: tx.accountKeys,
    recentBlockhash: tx.recentBlockhash,
    instructions: tx.instructions.map((ix) => ({ programIdIndex: ix.programIdIndex, accounts: ix.accounts, data: bs58.encode(ix.data), stackHeight: null })),
    addressTableLookups: tx.version === 0 ? tx.addressTableLookups : undefined,
  };
}

const SYSTEM_PROGRAM_ID = '11111111111111111111111111111111';

/** agave's parsed instruction: system transfers parsed, every other instruction as partially decoded. */
function parsedInstruction(tx: WireTransaction, ix: WireTransaction['instructions'][number]): unknown {
  const programId = tx.accountKeys[ix.programIdIndex]!;
  const accounts = ix.accounts.map((i) => tx.accountKeys[i]!);
  const data = Buffer.from(ix.data);
  if (programId === SYSTEM_PROGRAM_ID && data.length === 12 && data.readUInt32LE(0) === 2) {
    return { parsed: { info: { destination: accounts[1], lamports: data.readBigUInt64LE(4), source: accounts[0] }, type: 'transfer' }, program: 'system', programId, stackHeight: null };
  }
  return { accounts, data: bs58.encode(data), programId, stackHeight: null };
}

function parsedMessage(tx: WireTransaction): Record<string, unknown> {
  return {
    accountKeys: tx.accountKeys.map((pubkey, i) => ({ pubkey, writable: isWritable(tx, i), signer: isSigner(tx, i), source: 'transaction' })),
    recentBlockhash: tx.recentBlockhash,
    instructions: tx.instructions.map((ix) => parsedInstruction(tx, ix)),
    addressTableLookups: tx.version === 0 ? tx.addressTableLookups : undefined,
  };
}

/** The transaction alone, in `encoding`. */
export function encodeTransaction(tx: WireTransaction, encoding: TransactionEncoding): unknown {
  switch (encoding) {
    case 'binary': return bs58.encode(tx.bytes);
    case 'base58': return [bs58.encode(tx.bytes), 'base58'];
    case 'base64': return [Buffer.from(tx.bytes).toString('base64'), 'base64'];
    case 'json': return { signatures: tx.signatures, message: rawMessage(tx) };
    case 'jsonParsed': return { signatures: tx.signatures, message: parsedMessage(tx) };
  }
}

/** agave's `UiTransactionStatusMeta` of a record. */
export function encodeMeta(record: TransactionRecord, parsed: boolean): Record<string, unknown> {
  const inner = record.innerInstructions.map(({ index, instructions }) => ({
    index,
    instructions: instructions.map((ix) => parsed
      ? { ...(parsedInstruction(record.tx, { programIdIndex: ix.programIdIndex, accounts: ix.accounts, data: bs58.decode(ix.data) }) as object), stackHeight: ix.stackHeight }
      : ix),
  }));
  return {
    err: record.err,
    status: record.err === null ? { Ok: null } : { Err: record.err },
    fee: record.fee,
    preBalances: record.preBalances,
    postBalances: record.postBalances,
    innerInstructions: inner,
    logMessages: record.logs,
    preTokenBalances: record.preTokenBalances,
    postTokenBalances: record.postTokenBalances,
    rewards: [],
    loadedAddresses: parsed ? undefined : { writable: [], readonly: [] },
    returnData: record.returnData === undefined ? undefined : { programId: record.returnData.programId, data: [Buffer.from(record.returnData.data).toString('base64'), 'base64'] },
    computeUnitsConsumed: record.computeUnitsConsumed,
  };
}

/**
 * The transaction with its meta and version, as in a block or `getTransaction`. A v0 transaction asked
 * for without `maxSupportedTransactionVersion` is refused with agave's `-32015`.
 */
export function encodeWithMeta(record: TransactionRecord, encoding: TransactionEncoding, maxVersion: number | undefined): Record<string, unknown> {
  if (record.tx.version === 0 && maxVersion === undefined) {
    throw new RpcError(-32015, 'Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0');
  }
  return { transaction: encodeTransaction(record.tx, encoding), meta: encodeMeta(record, encoding === 'jsonParsed'), version: maxVersion === undefined ? undefined : record.tx.version };
}
