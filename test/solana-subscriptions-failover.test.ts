import t from 'tap';
import {
  appendTransactionMessageInstruction, createTransactionMessage, generateKeyPairSigner, getBase64EncodedWireTransaction,
  getSignatureFromTransaction, pipe, setTransactionMessageFeePayerSigner, setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners, type Blockhash,
} from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { startLiteSvmInstance, type LiteSvmInstance } from '@tollgate/devnet';
import { Tokens, keyIdOf } from '../core/plugin-api.js';
import { type UsageRecorder } from '../core/store-api.js';
import { httpTransport } from '../plugins/http/index.js';
import { solanaFamily } from '../plugins/solana/index.js';
import { wsTransport, type WsTransport } from '../plugins/ws/index.js';
import { startTestGateway } from './helpers/gateway.js';
import { post, rpc } from './helpers/json-rpc.js';
import { notificationsOf, openWs, wsCall } from './helpers/ws-client.js';
import { until } from './helpers/until.js';

// Two devnet Solana nodes of one chain (same genesis, slots advanced in step, so the same blockhashes), both
// primaries. A client's signature subscription is served by one; the transaction lands on the other only;
// then the serving one is killed. The streams move to the other: the signature's outcome
// arrives exactly once (read back from the new node, whose own subscription's repeat is dropped), and the
// slots go on without a repeat, a step back or a gap.
const nodes: LiteSvmInstance[] = await Promise.all(['a', 'b'].map((n) => startLiteSvmInstance(`litesvm#failover-${n}`, { slotMs: 0 })));
t.teardown(() => Promise.all(nodes.map((n) => n.stop())));
const KEY = 'sol-failover-key-0001';
const gw = await startTestGateway({
  plans: { metered: { dailyCredits: 1_000_000_000, creditsPerSecond: 1_000_000, failover: false } },
  keys: [{ key: KEY, plan: 'metered' }],
  networks: [{ name: 'solana', families: ['solana'], upstreams: nodes.map((n, i) => ({ name: `node-${i}`, url: n.url, wsUrl: n.wsUrl })) }],
}, [httpTransport(), wsTransport({ pingIntervalMs: 600_000, subscriptions: { upstreamPingMs: 500, healthCheckMs: 200 } }), solanaFamily()]);
t.teardown(() => gw.close());
const transport = gw.gateway.container.resolveAll(Tokens.Transport).find((x) => x.name === 'ws') as WsTransport;
const usage = gw.gateway.container.resolve<UsageRecorder>(Tokens.UsageRecorder);

let killed: LiteSvmInstance | undefined;
/** Moves every live node one slot on, together. */
const step = (): void => { for (const n of nodes) if (n !== killed) n.node.advance(); };

async function call(url: string, method: string, params: unknown[]): Promise<unknown> {
  const body = (await post(url, rpc(method, params))).json as { result?: unknown; error?: unknown };
  if (body.error !== undefined) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result;
}

t.test('a pending signatureSubscribe fires once, and slots go on, when its node dies', async (t) => {
  const payer = await generateKeyPairSigner();
  const recipient = await generateKeyPairSigner();
  for (const n of nodes) await call(n.url, 'requestAirdrop', [payer.address, 1_000_000_000]);
  for (let i = 0; i < 3; i++) step();
  const hashes = await Promise.all(nodes.map((n) => call(n.url, 'getLatestBlockhash', [{ commitment: 'processed' }]) as Promise<{ value: { blockhash: string; lastValidBlockHeight: number } }>));
  t.equal(hashes[0]!.value.blockhash, hashes[1]!.value.blockhash, 'one chain: the same blockhash on both nodes');
  const signed = await signTransactionMessageWithSigners(pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: hashes[0]!.value.blockhash as Blockhash, lastValidBlockHeight: BigInt(hashes[0]!.value.lastValidBlockHeight) }, m),
    (m) => appendTransactionMessageInstruction(getTransferSolInstruction({ source: payer, destination: recipient.address, amount: 10_000_000n }), m),
  ));
  const signature = getSignatureFromTransaction(signed);

  const client = await openWs(`${gw.origin.replace('http', 'ws')}/solana/ws/v3/${KEY}`);
  t.teardown(() => client.socket.terminate());
  const sig = (await wsCall(client, 'signatureSubscribe', [signature, { commitment: 'confirmed' }])).result;
  const slots = (await wsCall(client, 'slotSubscribe', [])).result;
  // The selector takes equal primaries in turn: the node serving the signature is the one to kill.
  const servedBy = transport.subscriptions.hubs().find((h) => h.key.includes('signatureSubscribe'))!.upstream!.name;
  const serving = nodes[Number(servedBy.slice('node-'.length))]!;
  const other = nodes.find((n) => n !== serving)!;
  step();
  await until('a slot arrives', () => notificationsOf(client, slots).length > 0);

  // The transaction lands on the other node only, and is confirmed there: the serving node never sees it.
  await call(other.url, 'sendTransaction', [getBase64EncodedWireTransaction(signed), { encoding: 'base64' }]);
  for (let i = 0; i < 3; i++) step();
  await until('the other node has it confirmed', async () => {
    const statuses = await call(other.url, 'getSignatureStatuses', [[signature]]) as { value: Array<{ confirmationStatus: string } | null> };
    return statuses.value[0]?.confirmationStatus === 'confirmed' || statuses.value[0]?.confirmationStatus === 'finalized';
  });
  t.same(notificationsOf(client, sig), [], 'nothing yet: the serving node never saw it');

  killed = serving;
  await serving.stop();
  const otherName = `node-${nodes.indexOf(other)}`;
  await until('the streams are on the other node', () => transport.subscriptions.hubs().every((h) => h.upstream?.name === otherName));
  await until('the outcome arrives', () => notificationsOf(client, sig).length > 0);
  for (let i = 0; i < 5; i++) step();
  await until('slots after the move arrive', () => (notificationsOf(client, slots) as Array<{ slot: number }>).some((s) => s.slot === Number(other.node.slot('processed'))));
  t.equal(notificationsOf(client, sig).length, 1, 'the outcome, once');
  t.match(notificationsOf(client, sig)[0], { context: { slot: Number }, value: { err: null } }, 'a success');
  const seen = (notificationsOf(client, slots) as Array<{ slot: number }>).map((s) => s.slot);
  t.ok(seen.every((s, i) => i === 0 || s === seen[i - 1]! + 1), `every slot once, in order, no gap: ${seen.join(',')}`);
  t.same((client.messages as Array<{ error?: unknown }>).filter((m) => m.error !== undefined), [], 'no error reached the client');
  const totals = await usage.usage!(keyIdOf(KEY), new Date().toISOString().slice(0, 10));
  t.equal(totals.signatureNotification?.calls, 1, 'the outcome charged once');
  t.equal(totals.slotNotification?.calls, seen.length, 'each slot charged once');
});
