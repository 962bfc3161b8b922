// A SOL transfer through Tollgate's demo gateway, confirmed by subscription, with @solana/kit:
// an airdrop to a new payer, a simulated then sent transfer to a new recipient, and the recipient's balance.
//
//   npm start                                     # in another terminal: the demo gateway
//   node examples/solana-transfer/transfer.mjs    # TOLLGATE_URL and TOLLGATE_KEY override the demo's
import {
  airdropFactory, appendTransactionMessageInstruction, createSolanaRpc, createSolanaRpcSubscriptions,
  createTransactionMessage, generateKeyPairSigner, getBase64EncodedWireTransaction, getSignatureFromTransaction,
  lamports, pipe, sendAndConfirmTransactionFactory, setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash, signTransactionMessageWithSigners,
} from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';

const base = process.env.TOLLGATE_URL ?? 'http://127.0.0.1:8545';
const key = process.env.TOLLGATE_KEY ?? 'tollgate-demo-key-0001';
const rpc = createSolanaRpc(`${base}/solana-devnet/v3/${key}`);
const rpcSubscriptions = createSolanaRpcSubscriptions(`${base.replace(/^http/, 'ws')}/solana-devnet/ws/v3/${key}`);

const payer = await generateKeyPairSigner();
const recipient = await generateKeyPairSigner();

// The devnet network enables its faucet; airdropFactory confirms the airdrop by signatureSubscribe.
await airdropFactory({ rpc, rpcSubscriptions })({ recipientAddress: payer.address, lamports: lamports(1_000_000_000n), commitment: 'confirmed' });

const { value: blockhash } = await rpc.getLatestBlockhash().send();
const message = pipe(
  createTransactionMessage({ version: 0 }),
  (m) => setTransactionMessageFeePayerSigner(payer, m),
  (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
  (m) => appendTransactionMessageInstruction(getTransferSolInstruction({ source: payer, destination: recipient.address, amount: 250_000_000n }), m),
);
const transaction = await signTransactionMessageWithSigners(message);

const simulation = await rpc.simulateTransaction(getBase64EncodedWireTransaction(transaction), { encoding: 'base64' }).send();
if (simulation.value.err !== null) throw new Error(`the simulation failed: ${JSON.stringify(simulation.value.err)}`);

// Sent once, confirmed by signatureSubscribe (and the slots it watches for the blockhash's expiry).
await sendAndConfirmTransactionFactory({ rpc, rpcSubscriptions })(transaction, { commitment: 'confirmed' });

const { value: balance } = await rpc.getBalance(recipient.address, { commitment: 'confirmed' }).send();
console.log(`transfer ${getSignatureFromTransaction(transaction)} confirmed`);
console.log(`recipient ${recipient.address} balance ${balance} lamports`);
// kit's subscriptions keep their socket open until aborted; the script is done.
process.exit(0);
