/**
 * A transaction sent again (a client's retry after a timeout, a second instance) is the node's
 * "already processed" error, though the transaction is on the chain. The gateway answers it as the first
 * send was answered: with the transaction's signature, once the node confirms it knows that signature.
 *
 * @module
 */
import type { JsonRpcErrorObject, MethodDefinition, NodeErrorInput } from '../../core/family-api.js';
import { firstSignature } from './transaction-signature.js';

/**
 * What a node says when it has the transaction already: agave's preflight
 * (`Transaction simulation failed: This transaction has already been processed`), its `AlreadyProcessed`
 * transaction error by name, and LiteSVM's.
 */
export const ALREADY_PROCESSED = /already been processed|AlreadyProcessed|already processed/i;

/**
 * The `onNodeError` hook of `sendTransaction`: an "already processed" error is answered with the
 * transaction's signature when the node that said it knows that signature (`getSignatureStatuses` with
 * history); anything else leaves the node's error as the answer.
 */
export const resentTransaction: NonNullable<MethodDefinition['onNodeError']> = async (error: JsonRpcErrorObject, input: NodeErrorInput) => {
  if (!ALREADY_PROCESSED.test(error.message)) return undefined;
  const signature = firstSignature(input.params);
  if (signature === undefined) return undefined;
  const statuses = (await input.ask('getSignatureStatuses', [[signature], { searchTransactionHistory: true }])) as { value?: unknown[] } | null;
  return statuses?.value?.[0] == null ? undefined : { result: signature };
};
