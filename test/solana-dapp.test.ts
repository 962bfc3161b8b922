import t from 'tap';
import {
  airdropFactory, appendTransactionMessageInstruction, assertIsTransactionWithBlockhashLifetime, createDefaultRpcTransport, createSolanaRpcFromTransport, createSolanaRpcSubscriptions, createTransactionMessage,
  generateKeyPairSigner, getBase64EncodedWireTransaction, getSignatureFromTransaction, lamports, pipe,
  sendAndConfirmTransactionFactory, setTransactionMessageFeePayerSigner, setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners, type Address, type KeyPairSigner, type RpcTransport,
} from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { Connection, Keypair, LAMPORTS_PER_SOL, PublicKey, SystemProgram, Transaction, sendAndConfirmTransaction } from '@solana/web3.js';
import { Tokens } from '../core/plugin-api.js';
import { type CreditLedger, type UsageRecorder } from '../core/store-api.js';
import type { GatewayConfig } from '../core/index.js';
import { banner } from '../examples/gateway/serve.js';
import { SOLANA_EVENT_CREDITS } from '../plugins/solana/subscriptions/index.js';
import type { WsTransport } from '../plugins/ws/index.js';
import { startExampleGateway } from './helpers/example-gateway.js';
import { until } from './helpers/until.js';

// What a Solana dApp does first, against the demo's solana-devnet on the URLs its banner prints: kit's
// reads, an airdrop and a transfer confirmed by subscription, history reads, account and slot
// notifications; web3.js 1.x's sendAndConfirmTransaction and onAccountChange. Every call and every
// notification is in the key's usage at its price, and the ledger agrees.
const gw = await startExampleGateway();
t.teardown(() => gw.close());
const printed = await banner(gw.gateway, gw.gateway.config as GatewayConfig, [], Number(new URL(gw.origin).port), true, []);
const httpUrl = /(http:\/\/\S+\/solana-devnet\/v3\/)<API_KEY>/.exec(printed)?.[1];
const wsUrl = /(ws:\/\/\S+\/solana-devnet\/ws\/v3\/)<API_KEY>/.exec(printed)?.[1];
// kit's confirmation races one status lookup against the signature's notification and aborts the loser:
// a lookup still in flight when the notification wins is a call the client cancelled (free, recorded as
// failed). Counted here, by method, so the usage check below can tell those from refusals.
const abortedByClient: Record<string, number> = {};
const kitTransport = createDefaultRpcTransport({ url: `${httpUrl}${gw.key}` });
const countingTransport: RpcTransport = async (config) => {
  try {
    return await kitTransport(config);
  } catch (error) {
    if (config.signal?.aborted === true) {
      const method = (config.payload as { method?: string }).method ?? '(unknown)';
      abortedByClient[method] = (abortedByClient[method] ?? 0) + 1;
    }
    throw error;
  }
};
const rpc = createSolanaRpcFromTransport(countingTransport);
const rpcSubscriptions = createSolanaRpcSubscriptions(`${wsUrl}${gw.key}`);
const network = gw.gateway.networks.all.find((n) => n.name === 'solana-devnet')!;
const ledger = gw.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);
const transport = gw.gateway.container.resolveAll(Tokens.Transport).find((x) => x.name === 'ws') as WsTransport;
const usage = gw.gateway.container.resolve<UsageRecorder>(Tokens.UsageRecorder);
const KEY_ID = 'demo';
const day = (): string => new Date().toISOString().slice(0, 10);
type Totals = Record<string, { calls: number; credits: number; failed: number } | undefined>;
const totals = async (): Promise<Totals> => (await usage.usage!(KEY_ID, day())) as Totals;
const used = async (): Promise<number> => (await ledger.balance(KEY_ID, 1_000_000_000, new Date())).used;
const usedBefore = await used();
const totalsBefore = await totals();

const sendAndConfirm = sendAndConfirmTransactionFactory({ rpc, rpcSubscriptions });

/** A signed transfer of `amount` lamports from `payer` to `to`. */
async function transfer(payer: KeyPairSigner, to: Address, amount: bigint) {
  const { value: blockhash } = await rpc.getLatestBlockhash().send();
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
    (m) => appendTransactionMessageInstruction(getTransferSolInstruction({ source: payer, destination: to, amount }), m),
  );
  const signed = await signTransactionMessageWithSigners(message);
  assertIsTransactionWithBlockhashLifetime(signed);
  return signed;
}

t.test('@solana/kit: reads, an airdrop, a simulated then confirmed transfer, history, notifications', async (t) => {
  t.ok(httpUrl && wsUrl, 'the banner prints solana-devnet\'s HTTP and WebSocket URLs');
  const payer = await generateKeyPairSigner();
  const recipient = await generateKeyPairSigner();
  t.type(await rpc.getSlot().send(), 'bigint', 'getSlot');
  t.type(await rpc.getBlockHeight().send(), 'bigint', 'getBlockHeight');
  t.match(await rpc.getEpochInfo().send(), { epoch: BigInt, slotIndex: BigInt, slotsInEpoch: BigInt });
  t.match((await rpc.getLatestBlockhash().send()).value, { blockhash: String, lastValidBlockHeight: BigInt });
  const rent = await rpc.getMinimumBalanceForRentExemption(0n).send();
  t.ok(rent > 0n, 'getMinimumBalanceForRentExemption');

  await airdropFactory({ rpc, rpcSubscriptions })({ commitment: 'confirmed', recipientAddress: payer.address, lamports: lamports(2n * BigInt(LAMPORTS_PER_SOL)) });
  t.equal((await rpc.getBalance(payer.address, { commitment: 'confirmed' }).send()).value, 2n * BigInt(LAMPORTS_PER_SOL), 'the airdrop, confirmed by signatureSubscribe');

  const first = await transfer(payer, recipient.address, rent + 1_000_000n);
  const simulated = await rpc.simulateTransaction(getBase64EncodedWireTransaction(first), { encoding: 'base64', commitment: 'confirmed' }).send();
  t.equal(simulated.value.err, null, 'the simulation succeeds');
  await sendAndConfirm(first, { commitment: 'confirmed' });
  const signature = getSignatureFromTransaction(first);
  t.equal((await rpc.getBalance(recipient.address, { commitment: 'confirmed' }).send()).value, rent + 1_000_000n, 'the recipient\'s balance');
  const history = await rpc.getSignaturesForAddress(recipient.address, { commitment: 'confirmed' }).send();
  t.ok(history.some((h) => h.signature === signature), 'getSignaturesForAddress');
  const tx = await rpc.getTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0, encoding: 'json' }).send();
  t.equal(tx?.meta?.err, null, 'getTransaction');
  const statuses = await rpc.getSignatureStatuses([signature]).send();
  t.match(statuses.value[0], { err: null, confirmationStatus: /confirmed|finalized/ }, 'getSignatureStatuses');
  const accounts = await rpc.getMultipleAccounts([payer.address, recipient.address], { encoding: 'base64' }).send();
  t.equal(accounts.value[1]?.lamports, rent + 1_000_000n, 'getMultipleAccounts');

  const abort = new AbortController();
  t.teardown(() => abort.abort());
  const accountEvents = await rpcSubscriptions.accountNotifications(recipient.address, { commitment: 'confirmed', encoding: 'base64' }).subscribe({ abortSignal: abort.signal });
  const slotEvents = await rpcSubscriptions.slotNotifications().subscribe({ abortSignal: abort.signal });
  const slots: bigint[] = [];
  const balances: bigint[] = [];
  // Both are read from before the second transfer is sent, until they have seen what they wait for.
  const watchingSlots = (async () => { for await (const s of slotEvents) { slots.push(s.slot); if (slots.length >= 2) break; } })();
  const watchingAccount = (async () => { for await (const a of accountEvents) { balances.push(a.value.lamports); if (a.value.lamports === rent + 2_000_000n) break; } })();
  await sendAndConfirm(await transfer(payer, recipient.address, 1_000_000n), { commitment: 'confirmed' });
  await watchingAccount;
  t.equal(balances.at(-1), rent + 2_000_000n, 'accountNotifications sees the second transfer');
  await watchingSlots;
  t.ok(slots[1]! > slots[0]!, 'slotNotifications: slots going forward');
});

t.test('@solana/web3.js 1.x: sendAndConfirmTransaction and onAccountChange over the WebSocket', async (t) => {
  const connection = new Connection(`${httpUrl}${gw.key}`, { wsEndpoint: `${wsUrl}${gw.key}`, commitment: 'confirmed' });
  const from = Keypair.generate();
  const to = Keypair.generate();
  const funded = await connection.requestAirdrop(from.publicKey, LAMPORTS_PER_SOL);
  const { blockhash, lastValidBlockHeight } = await connection.getLatestBlockhash();
  await connection.confirmTransaction({ signature: funded, blockhash, lastValidBlockHeight });
  const changes: number[] = [];
  const listener = connection.onAccountChange(to.publicKey, (info) => changes.push(info.lamports));
  const rent = await connection.getMinimumBalanceForRentExemption(0);
  const tx = new Transaction().add(SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: to.publicKey, lamports: rent + 5_000 }));
  const signature = await sendAndConfirmTransaction(connection, tx, [from]);
  t.type(signature, 'string', 'sendAndConfirmTransaction');
  await until('onAccountChange fires', () => changes.length > 0);
  t.equal(changes[0], rent + 5_000, 'the new balance');
  t.equal(await connection.getBalance(new PublicKey(to.publicKey)), rent + 5_000);
  await connection.removeAccountChangeListener(listener);
  // web3.js closes its WebSocket once it holds no subscription (else it would reconnect to a closed gateway without end).
  await until('the dApps\' WebSockets are closed', () => transport.connections === 0);
});

t.test('every call and notification is in the key\'s usage at its price, and the ledger agrees', async (t) => {
  const delta = async (): Promise<Array<[string, number, number, number]>> => {
    const now = await totals();
    return Object.entries(now)
      .map(([key, v]) => [key, v!.calls - (totalsBefore[key]?.calls ?? 0), v!.credits - (totalsBefore[key]?.credits ?? 0), v!.failed - (totalsBefore[key]?.failed ?? 0)] as [string, number, number, number])
      .filter(([, calls]) => calls !== 0);
  };
  // Usage is written a moment after the ledger: wait until the two agree.
  await until('usage has caught up with the ledger', async () => (await delta()).reduce((sum, [, , credits]) => sum + credits, 0) === (await used()) - usedBefore);
  const rows = await delta();
  const methods = new Set<string>();
  for (const [method, calls, credits, failed] of rows) {
    methods.add(method);
    const price = SOLANA_EVENT_CREDITS[method] ?? network.methods.get(method)?.definition.credits;
    if (method.endsWith('Unsubscribe')) {
      // kit closes its socket as it unsubscribes from the last stream: an answer that could not be written
      // is not charged (the call stays counted in usage, its credits given back). The ledger check above holds.
      t.ok(credits % price! === 0 && credits <= (calls - failed) * price!, `${method}: ${credits / price!} of ${calls - failed} answers written, at ${price}`);
    } else {
      t.equal(credits, (calls - failed) * price!, `${method}: ${calls - failed} at ${price}${failed > 0 ? `, ${failed} refused (free)` : ''}`);
    }
    // kit unsubscribes from a signature after its outcome, when the node (and the gateway) has ended it
    // already; any other failure must be a call kit aborted itself (counted by its transport above).
    if (failed > 0 && method !== 'signatureUnsubscribe') {
      t.ok(failed <= (abortedByClient[method] ?? 0), `${method}: its ${failed} failed call(s) are calls the client aborted (${abortedByClient[method] ?? 0}), not refusals`);
    }
  }
  for (const expected of ['getSlot', 'getBlockHeight', 'getEpochInfo', 'getLatestBlockhash', 'getMinimumBalanceForRentExemption', 'requestAirdrop', 'simulateTransaction', 'sendTransaction', 'getBalance', 'getSignaturesForAddress', 'getTransaction', 'getSignatureStatuses', 'getMultipleAccounts', 'signatureSubscribe', 'accountSubscribe', 'slotSubscribe', 'signatureNotification', 'accountNotification', 'slotNotification']) {
    t.ok(methods.has(expected), `${expected} is in the usage`);
  }
});
