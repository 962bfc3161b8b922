/**
 * A transaction sent again (a client's retry after a timeout, a second instance, a second wallet) is the
 * node's error in every client's words, though the transaction is in the pool or already mined. The
 * gateway answers it as the first send was answered: with the transaction's hash, computed from the
 * signed bytes, once the node confirms it knows that hash.
 *
 * @module
 */
import type { JsonRpcErrorObject, MethodDefinition, NodeErrorInput } from '../../core/family-api.js';
import { loadKeccak256, transactionHash } from './transaction-hash.js';

/**
 * What the major clients say when they already have the transaction, or when its nonce was used (by it,
 * once mined, or by another transaction: the hash check tells the two apart):
 * - geth, erigon, reth: `already known`, `nonce too low: next nonce 5, tx nonce 4`;
 * - nethermind: `AlreadyKnown`, `OldNonce`, `NonceTooLow`;
 * - besu: `Known transaction`, `Nonce too low` (and `ALREADY_KNOWN`, `NONCE_TOO_LOW` as codes in text);
 * - anvil: `transaction already imported`, `nonce too low`;
 * - reth also `transaction already exists in the pool`, some providers `already in mempool`.
 */
export const RESENT_TRANSACTION = /already[\s_-]?known|already imported|known transaction|already exists|already in (?:the )?(?:tx|transaction )?(?:pool|mempool)|nonce[\s_-]?too[\s_-]?low|old[\s_-]?nonce/i;

/** Whether a node's error says the transaction was already sent (or its nonce already used). */
export function saysAlreadySent(error: JsonRpcErrorObject): boolean {
  return RESENT_TRANSACTION.test(error.message);
}

/**
 * The `onNodeError` hook of `eth_sendRawTransaction`: an "already known" or "nonce too low" error is
 * answered with the transaction's hash when the node that said it returns the transaction for that hash
 * (`eth_getTransactionByHash`); anything else, or a node that does not know the hash (another
 * transaction took the nonce), leaves the node's error as the answer.
 */
export const resentTransaction: NonNullable<MethodDefinition['onNodeError']> = async (error: JsonRpcErrorObject, input: NodeErrorInput) => {
  if (!saysAlreadySent(error)) return undefined;
  // Told once, through Node's warnings (printed on stderr unless the application handles them).
  const keccak256 = await loadKeccak256((missing) => process.emitWarning(missing.message, { code: 'TOLLGATE_MISSING_PEER' }));
  if (keccak256 === undefined) return undefined;
  const raw = Array.isArray(input.params) ? input.params[0] : undefined;
  const hash = transactionHash(raw, keccak256);
  if (hash === undefined) return undefined;
  const known = (await input.ask('eth_getTransactionByHash', [hash])) as { hash?: unknown } | null;
  if (typeof known?.hash !== 'string' || known.hash.toLowerCase() !== hash) return undefined;
  return { result: hash };
};
