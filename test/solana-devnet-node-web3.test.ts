import t from 'tap';
import { Connection, Keypair, LAMPORTS_PER_SOL, PublicKey, sendAndConfirmTransaction, SystemProgram, Transaction } from '@solana/web3.js';
import { startLiteSvmInstance } from '@tollgate/devnet';
import { until } from './helpers/until.js';

// The embedded Solana node driven by @solana/web3.js 1.x: its Connection confirms over the node's
// WebSocket, told (wsEndpoint) and derived (the RPC port + 1, as agave serves pubsub).
const solana = await startLiteSvmInstance('litesvm#web3', { slotMs: 40 });
const connections: Connection[] = [];
// web3.js reconnects its WebSocket forever once the server goes: close each client's socket first.
type RpcWebSocket = { setAutoReconnect(on: boolean): void; close(): void };
t.teardown(async () => {
  for (const connection of connections) {
    const socket = (connection as unknown as { _rpcWebSocket: RpcWebSocket })._rpcWebSocket;
    socket.setAutoReconnect(false);
    socket.close();
  }
  await solana.stop();
});
const connect = (config: ConstructorParameters<typeof Connection>[1]): Connection => {
  const connection = new Connection(solana.url, config);
  connections.push(connection);
  return connection;
};

async function fundedPayer(connection: Connection): Promise<Keypair> {
  const payer = Keypair.generate();
  const signature = await connection.requestAirdrop(payer.publicKey, 2 * LAMPORTS_PER_SOL);
  const { value } = await connection.confirmTransaction({ signature, ...(await connection.getLatestBlockhash()) }, 'confirmed');
  if (value.err !== null) throw new Error('airdrop failed');
  return payer;
}

t.test('sendAndConfirmTransaction and onAccountChange with wsEndpoint', async (t) => {
  const connection = connect({ commitment: 'confirmed', wsEndpoint: solana.wsUrl });
  const payer = await fundedPayer(connection);
  const recipient = Keypair.generate().publicKey;
  const changes: number[] = [];
  const listener = connection.onAccountChange(recipient, (info) => changes.push(info.lamports), { commitment: 'confirmed' });
  t.teardown(() => connection.removeAccountChangeListener(listener));
  const signature = await sendAndConfirmTransaction(connection, new Transaction().add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: recipient, lamports: 1_500_000 })), [payer]);
  await until('the account change', () => changes.length === 1);
  t.same(changes, [1_500_000]);
  t.equal(await connection.getBalance(recipient), 1_500_000);
  const parsed = await connection.getParsedTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
  t.same((parsed!.transaction.message.instructions[0] as { parsed: unknown }).parsed, { info: { destination: recipient.toBase58(), lamports: 1_500_000, source: payer.publicKey.toBase58() }, type: 'transfer' });
  const history = await connection.getSignaturesForAddress(recipient);
  t.same(history.map((h) => h.signature), [signature]);
});

t.test('a Connection told only the HTTP URL finds the WebSocket on the next port', async (t) => {
  t.ok(solana.pubsubUrl, 'the port after the RPC port was free');
  t.equal(new URL(solana.pubsubUrl!).port, String(Number(new URL(solana.url).port) + 1));
  const connection = connect('confirmed');
  const slots: number[] = [];
  const id = connection.onSlotChange((info) => slots.push(info.slot));
  await until('two slot notifications', () => slots.length >= 2);
  await connection.removeSlotChangeListener(id);
  t.equal(slots[1], slots[0]! + 1);
  const payer = await fundedPayer(connection);
  const signature = await sendAndConfirmTransaction(connection, new Transaction().add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: new PublicKey(solana.getSeed().wallet.address), lamports: 1000 })), [payer]);
  t.equal((await connection.getSignatureStatus(signature)).value?.err, null);
});

t.test('a failing transfer is refused by preflight with the node\'s -32002 and its simulation', async (t) => {
  const connection = connect({ commitment: 'confirmed', wsEndpoint: solana.wsUrl });
  const poor = Keypair.generate();
  const payer = await fundedPayer(connection);
  await sendAndConfirmTransaction(connection, new Transaction().add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: poor.publicKey, lamports: 1_000_000 })), [payer]);
  const tooMuch = new Transaction().add(SystemProgram.transfer({ fromPubkey: poor.publicKey, toPubkey: payer.publicKey, lamports: 5 * LAMPORTS_PER_SOL }));
  const error = await sendAndConfirmTransaction(connection, tooMuch, [poor]).then(() => undefined, (e: unknown) => e as Error & { logs?: string[] });
  t.match(error?.message, /Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1/);
  t.ok(error?.logs?.some((l) => l.includes('insufficient lamports')), 'the simulation\'s logs come with the error');
});
