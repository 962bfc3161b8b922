import t from 'tap';
import { startLiteSvmInstance } from '@tollgate/devnet';
import { post, rpc } from './helpers/json-rpc.js';
import { until } from './helpers/until.js';
import { openWs, type RawWsClient } from './helpers/ws-client.js';

// The node's nine subscriptions on the wire, with the slot clock stopped (slotMs 0) so the test
// moves slots itself and every notification is due to a step it took.
const solana = await startLiteSvmInstance('litesvm#pubsub', { slotMs: 0 });
t.teardown(() => solana.stop());
const { node } = solana;
const seed = solana.getSeed();
// Off genesis, so that processed, confirmed and finalized are distinct slots.
node.advance(5);

type Message = { id?: unknown; result?: unknown; error?: { code: number; message: string }; method?: string; params?: { result: unknown; subscription: number } };

async function call(client: RawWsClient, method: string, params: unknown[], id: number): Promise<Message> {
  client.send({ jsonrpc: '2.0', id, method, params });
  await until(`the answer to ${method}`, () => (client.messages as Message[]).some((m) => m.id === id), 10_000);
  return (client.messages as Message[]).find((m) => m.id === id)!;
}

const notifications = (client: RawWsClient, subscription: number): unknown[] =>
  (client.messages as Message[]).filter((m) => m.params?.subscription === subscription).map((m) => m.params!.result);

async function airdrop(to: string, lamports: number): Promise<string> {
  return ((await post(solana.url, rpc('requestAirdrop', [to, lamports]))).json as { result: string }).result;
}

t.test('the nine subscriptions, their notifications and unsubscribes', async (t) => {
  const client = await openWs(solana.wsUrl);
  t.teardown(() => client.close());
  const raw: string[] = [];
  client.socket.on('message', (data) => raw.push(String(data)));
  const recipient = seed.missing;
  const id = async (method: string, params: unknown[], n: number): Promise<number> => {
    const answer = await call(client, method, params, n);
    t.type(answer.result, 'number', `${method} answers a subscription id`);
    return answer.result as number;
  };
  const account = await id('accountSubscribe', [recipient, { commitment: 'processed', encoding: 'base64' }], 1);
  const block = await id('blockSubscribe', ['all', { commitment: 'confirmed', transactionDetails: 'signatures' }], 2);
  const logs = await id('logsSubscribe', [{ mentions: [recipient] }, { commitment: 'processed' }], 3);
  const program = await id('programSubscribe', ['11111111111111111111111111111111', { commitment: 'processed', encoding: 'base64', filters: [{ dataSize: 0 }] }], 4);
  const root = await id('rootSubscribe', [], 5);
  const slot = await id('slotSubscribe', [], 6);
  const updates = await id('slotsUpdatesSubscribe', [], 7);
  const vote = await id('voteSubscribe', [], 8);

  const before = node.slot('processed');
  const signature = await airdrop(recipient, 5_000_000);
  const sig = await id('signatureSubscribe', [signature, { commitment: 'confirmed' }], 9);
  await until('processed-level notifications', () => notifications(client, account).length === 1 && notifications(client, logs).length === 1 && notifications(client, program).length >= 1);
  t.same(notifications(client, account)[0], {
    context: { slot: Number(before) },
    value: { lamports: 5_000_000, data: ['', 'base64'], owner: '11111111111111111111111111111111', executable: false, rentEpoch: 18446744073709552000, space: 0 },
  });
  const logLine = notifications(client, logs)[0] as { context: unknown; value: { signature: string; err: unknown; logs: string[] } };
  t.same(logLine.context, { slot: Number(before) });
  t.equal(logLine.value.signature, signature);
  t.equal(logLine.value.err, null);
  t.ok(logLine.value.logs.length > 0);
  t.ok((notifications(client, program) as Array<{ value: { pubkey: string } }>).some((n) => n.value.pubkey === recipient), 'the program\'s account that changed');
  t.same(notifications(client, sig), [], 'landed, not yet confirmed');

  node.advance(1);
  await until('the slot, vote, block and signature notifications', () =>
    notifications(client, slot).length === 1 && notifications(client, vote).length === 1 && notifications(client, block).length === 1 && notifications(client, sig).length === 1);
  t.same(notifications(client, slot), [{ parent: Number(before), root: Number(node.slot('finalized')), slot: Number(before) + 1 }]);
  t.same(notifications(client, sig)[0], { context: { slot: Number(before) }, value: { err: null } }, 'confirmed once');
  const blockNote = notifications(client, block)[0] as { context: { slot: number }; value: { slot: number; err: unknown; block: { signatures: string[]; blockHeight: number } } };
  t.equal(blockNote.value.slot, Number(before));
  t.equal(blockNote.value.err, null);
  t.same(blockNote.value.block.signatures, [signature], 'the block holds the airdrop');
  const voteNote = notifications(client, vote)[0] as { votePubkey: string; slots: number[]; hash: string };
  t.same(voteNote.slots, [Number(before)]);
  const votedBlock = (await post(solana.url, rpc('getBlock', [Number(before), { commitment: 'confirmed', transactionDetails: 'none' }]))).json as { result: { blockhash: string } };
  t.equal(voteNote.hash, votedBlock.result.blockhash, 'a vote on the block');
  const types = (notifications(client, updates) as Array<{ type: string }>).map((u) => u.type);
  t.same(types.filter((type) => type !== 'optimisticConfirmation' && type !== 'root'), ['completed', 'frozen', 'firstShredReceived', 'createdBank']);
  t.match(raw.find((text) => text.includes('"slotNotification"')), new RegExp(`^\\{"jsonrpc":"2\\.0","method":"slotNotification","params":\\{"result":\\{"parent":\\d+,"root":\\d+,"slot":\\d+\\},"subscription":${slot}\\}\\}$`), 'agave\'s wire format');

  const gone = await call(client, 'signatureUnsubscribe', [sig], 10);
  t.same(gone.error, { code: -32602, message: 'Invalid subscription id.' }, 'a signature subscription ends once it fired');

  node.advance(40);
  // The 40 slots' root notifications can reach the socket over several reads: the last one must be the
  // finalized slot (the wait fails otherwise), and every root before it must come once, in order.
  const finalized = Number(node.slot('finalized'));
  await until('the root notifications up to the finalized slot', () => notifications(client, root).at(-1) === finalized);
  const roots = notifications(client, root) as number[];
  t.same(roots, Array.from({ length: roots.length }, (_, i) => roots[0]! + i), 'each root once, in order');

  t.same((await call(client, 'slotUnsubscribe', [slot], 11)).result, true);
  t.same((await call(client, 'accountUnsubscribe', [slot], 12)).error, { code: -32602, message: 'Invalid subscription id.' }, 'an id of another kind');
  t.same((await call(client, 'nope', [], 13)).error, { code: -32601, message: 'Method not found' });
  t.same((await call(client, 'blockSubscribe', ['all', { commitment: 'processed' }], 14)).error?.code, -32602, 'blocks need confirmed');
  t.same((await call(client, 'logsSubscribe', [{ mentions: [recipient, seed.wallet.address] }], 15)).error, { code: -32602, message: 'Invalid Request: Only 1 address supported' });
  const slotsBefore = notifications(client, slot).length;
  node.advance(1);
  await until('a slot update after the unsubscribe', () => notifications(client, updates).length > types.length);
  t.equal(notifications(client, slot).length, slotsBefore, 'no slot notification after slotUnsubscribe');
});

t.test('a signature that landed before the subscription is notified once its commitment is reached', async (t) => {
  const client = await openWs(solana.pubsubUrl ?? solana.wsUrl);
  t.teardown(() => client.close());
  const signature = await airdrop(seed.wallet.address, 1234);
  const sub = (await call(client, 'signatureSubscribe', [signature, { commitment: 'finalized' }], 1)).result as number;
  // An answer on the same socket comes after every notification sent before it: a barrier.
  const barrier = async (n: number): Promise<unknown> => call(client, 'slotUnsubscribe', [1_000_000], n);
  node.advance(31);
  await barrier(2);
  t.same(notifications(client, sub), [], 'not finalized yet');
  node.advance(1);
  await until('the notification', () => notifications(client, sub).length === 1);
  node.advance(1);
  await barrier(3);
  t.equal(notifications(client, sub).length, 1, 'once');
});

t.test('closing a connection drops its subscriptions', async (t) => {
  const client = await openWs(solana.wsUrl);
  const base = solana.server.pubsub.size;
  await call(client, 'slotSubscribe', [], 1);
  t.equal(solana.server.pubsub.size, base + 1);
  client.close();
  await client.closed;
  await until('the subscription dropped', () => solana.server.pubsub.size === base);
});

t.test('the genesis block is notified as getBlock shows it', async (t) => {
  const fresh = await startLiteSvmInstance('litesvm#genesis', { slotMs: 0, seed: false });
  t.teardown(() => fresh.stop());
  const client = await openWs(fresh.wsUrl);
  t.teardown(() => client.close());
  const sub = (await call(client, 'blockSubscribe', ['all', { commitment: 'confirmed', transactionDetails: 'none' }], 1)).result as number;
  fresh.node.advance(1);
  await until('the genesis block', () => notifications(client, sub).length === 1);
  const got = notifications(client, sub)[0] as { value: { slot: number; err: unknown; block: unknown } };
  const block = ((await post(fresh.url, rpc('getBlock', [0, { commitment: 'confirmed', transactionDetails: 'none' }]))).json as { result: unknown }).result;
  t.same(got.value, { slot: 0, err: null, block });
  t.match(block, { previousBlockhash: '11111111111111111111111111111111', parentSlot: 0, blockHeight: 0 });
});

t.test('a stopped node frees both ports, and a new one can take them again', async (t) => {
  const first = await startLiteSvmInstance('litesvm#first', { slotMs: 0, seed: false });
  const { port } = first.server;
  t.equal(first.pubsubUrl, `ws://127.0.0.1:${port + 1}`);
  await first.stop();
  const again = await startLiteSvmInstance('litesvm#again', { slotMs: 0, seed: false, port });
  t.teardown(() => again.stop());
  t.equal(again.url, `http://127.0.0.1:${port}`);
  t.equal(again.pubsubUrl, `ws://127.0.0.1:${port + 1}`, 'the pubsub port too');
  const client = await openWs(again.pubsubUrl!);
  t.teardown(() => client.close());
  t.type((await call(client, 'slotSubscribe', [], 1)).result, 'number');
});
