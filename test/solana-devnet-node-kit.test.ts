import t from 'tap';
import {
  airdropFactory, appendTransactionMessageInstruction, assertIsTransactionWithBlockhashLifetime, createSolanaRpc, createSolanaRpcSubscriptions, createTransactionMessage,
  generateKeyPairSigner, getBase64EncodedWireTransaction, getSignatureFromTransaction, lamports, pipe, sendAndConfirmTransactionFactory,
  setTransactionMessageFeePayerSigner, setTransactionMessageLifetimeUsingBlockhash, signTransactionMessageWithSigners, type Address,
  type KeyPairSigner,
} from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { startLiteSvmInstance } from '@tollgate/devnet';
import { until } from './helpers/until.js';

// The embedded Solana node driven end to end by @solana/kit: airdrops and transfers confirmed by
// subscription, then read back through the history methods.
const solana = await startLiteSvmInstance('litesvm#kit', { slotMs: 40 });
t.teardown(() => solana.stop());
const rpc = createSolanaRpc(solana.url);
const subscriptions = createSolanaRpcSubscriptions(solana.wsUrl);
const airdrop = airdropFactory({ rpc, rpcSubscriptions: subscriptions });
const sendAndConfirm = sendAndConfirmTransactionFactory({ rpc, rpcSubscriptions: subscriptions });

async function transfer(from: KeyPairSigner, to: Address, amount: bigint) {
  const { value: blockhash } = await rpc.getLatestBlockhash({ commitment: 'confirmed' }).send();
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(from, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
    (m) => appendTransactionMessageInstruction(getTransferSolInstruction({ source: from, destination: to, amount: lamports(amount) }), m),
  );
  const signed = await signTransactionMessageWithSigners(message);
  assertIsTransactionWithBlockhashLifetime(signed);
  return signed;
}

t.test('reads a dApp makes first', async (t) => {
  t.ok((await rpc.getSlot({ commitment: 'processed' }).send()) >= (await rpc.getSlot({ commitment: 'finalized' }).send()));
  const epoch = await rpc.getEpochInfo().send();
  t.equal(epoch.blockHeight, epoch.absoluteSlot, 'one block a slot since slot 0');
  t.equal(epoch.epoch, 0n);
  t.equal(epoch.slotsInEpoch, 32n, 'the warmup schedule\'s first epoch');
  const { context, value } = await rpc.getLatestBlockhash().send();
  t.equal(value.lastValidBlockHeight, context.slot + 150n, 'valid for 150 blocks');
  t.equal((await rpc.isBlockhashValid(value.blockhash, { commitment: 'processed' }).send()).value, true);
  t.equal(await rpc.getMinimumBalanceForRentExemption(0n).send(), 890_880n, 'rent of an empty account');
});

t.test('airdrop, a transfer confirmed by subscription, and its history', async (t) => {
  const payer = await generateKeyPairSigner();
  const recipient = await generateKeyPairSigner();
  const airdropSignature = await airdrop({ recipientAddress: payer.address, lamports: lamports(2_000_000_000n), commitment: 'confirmed' });
  t.equal((await rpc.getBalance(payer.address, { commitment: 'confirmed' }).send()).value, 2_000_000_000n);

  const slots: bigint[] = [];
  const accountValues: bigint[] = [];
  const abort = new AbortController();
  t.teardown(() => abort.abort());
  const slotStream = await subscriptions.slotNotifications().subscribe({ abortSignal: abort.signal });
  const accountStream = await subscriptions.accountNotifications(recipient.address, { commitment: 'confirmed' }).subscribe({ abortSignal: abort.signal });
  void (async () => { for await (const n of slotStream) slots.push(n.slot); })().catch(() => undefined);
  void (async () => { for await (const n of accountStream) accountValues.push(n.value.lamports); })().catch(() => undefined);

  const tx = await transfer(payer, recipient.address, 1_000_000n);
  const simulation = await rpc.simulateTransaction(getBase64EncodedWireTransaction(tx), { encoding: 'base64', sigVerify: true }).send();
  t.equal(simulation.value.err, null, 'simulated first');
  t.ok(simulation.value.logs?.some((l) => l.includes('11111111111111111111111111111111 success')));
  await sendAndConfirm(tx, { commitment: 'confirmed' });
  const signature = getSignatureFromTransaction(tx);
  t.equal((await rpc.getBalance(recipient.address, { commitment: 'confirmed' }).send()).value, 1_000_000n);

  const second = await transfer(payer, recipient.address, 2_000_000n);
  await sendAndConfirm(second, { commitment: 'confirmed' });
  await until('the account notification of the second transfer', () => accountValues.includes(3_000_000n));
  t.same(accountValues, [1_000_000n, 3_000_000n], 'one notification per transfer, at confirmed');
  await until('slot notifications', () => slots.length >= 2);
  t.ok(slots.every((s, i) => i === 0 || s === slots[i - 1]! + 1n), 'slot notifications one by one');

  const history = await rpc.getSignaturesForAddress(recipient.address, { commitment: 'confirmed' }).send();
  t.same(history.map((h) => h.signature), [getSignatureFromTransaction(second), signature], 'newest first');
  const payerHistory = await rpc.getSignaturesForAddress(payer.address, { commitment: 'confirmed' }).send();
  t.equal(payerHistory.at(-1)!.signature, airdropSignature, 'the airdrop is in the payer\'s history');

  const landed = await rpc.getTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0, encoding: 'json' }).send();
  t.equal(landed!.version, 0);
  t.equal(landed!.meta!.fee, 5000n);
  t.same(landed!.meta!.postBalances.slice(0, 2), [2_000_000_000n - 5000n - 1_000_000n, 1_000_000n]);
  const statuses = await rpc.getSignatureStatuses([signature, getSignatureFromTransaction(second)]).send();
  t.ok(statuses.value.every((s) => s !== null && s.err === null && s.confirmationStatus !== 'processed'));
  const block = await rpc.getBlock(landed!.slot, { commitment: 'confirmed', maxSupportedTransactionVersion: 0, transactionDetails: 'signatures' }).send();
  t.ok(block!.signatures.includes(signature), 'the block holds the transaction');
  const many = await rpc.getMultipleAccounts([payer.address, recipient.address], { commitment: 'confirmed' }).send();
  t.same(many.value.map((a) => a?.lamports), [2_000_000_000n - 10_000n - 3_000_000n, 3_000_000n]);
});

t.test('statuses advance processed → confirmed → finalized by slot depth', async (t) => {
  const payer = await generateKeyPairSigner();
  const signature = await rpc.requestAirdrop(payer.address, lamports(1_000_000n)).send();
  const seen = new Set<string>();
  await until('finalized', async () => {
    const [status] = (await rpc.getSignatureStatuses([signature]).send()).value;
    if (status?.confirmationStatus) seen.add(status.confirmationStatus);
    return status?.confirmationStatus === 'finalized' && status.confirmations === null;
  });
  t.ok(seen.has('finalized'));
  t.ok(seen.has('confirmed') || seen.has('processed'), 'seen before finalized');
});
