import {
  appendTransactionMessageInstruction,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type Blockhash,
  type KeyPairSigner,
} from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';

/** A signed SOL transfer, as kit builds it: its base-64 wire bytes and its signature. */
export interface SignedTransfer {
  readonly base64: string;
  readonly signature: string;
}

/** Signs a transfer of `amount` lamports from `from` to `to` on `blockhash`, with @solana/kit. */
export async function signTransfer(from: KeyPairSigner, to: Address, amount: bigint, blockhash: { blockhash: Blockhash; lastValidBlockHeight: bigint }): Promise<SignedTransfer> {
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(from, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
    (m) => appendTransactionMessageInstruction(getTransferSolInstruction({ source: from, destination: to, amount: lamports(amount) }), m),
  );
  const signed = await signTransactionMessageWithSigners(message);
  return { base64: getBase64EncodedWireTransaction(signed), signature: getSignatureFromTransaction(signed) };
}
