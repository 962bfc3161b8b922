import t, { type Test } from 'tap';
import { createSolanaRpc, devnet, generateKeyPairSigner, lamports, type Signature } from '@solana/kit';
import { LiteSvmNode, startLiteSvmServer, type LiteSvmServer } from '@tollgate/devnet';
import { Tokens } from '../core/plugin-api.js';
import { type CreditLedger } from '../core/store-api.js';
import type { FailoverSelector } from '../core/upstream/failover-selector.js';
import { httpTransport } from '../plugins/http/index.js';
import { ledgerRedis } from '../plugins/ledger-redis/index.js';
import { solanaFamily, SOLANA_CREDITS } from '../plugins/solana/index.js';
import { startTestGateway } from './helpers/gateway.js';
import { startChaosUpstream, upstreamView } from './helpers/failover-upstreams.js';
import { startCountingRelay } from './helpers/counting-relay.js';
import { post, rpc } from './helpers/json-rpc.js';
import { redisAvailable, startRedisServer } from './helpers/redis-server.js';
import { signTransfer } from './helpers/solana-transfer.js';
import { until } from './helpers/until.js';

// Commitment- and slot-aware routing, and safe sends, with two devnet Solana nodes behind the gateway.
const KEY = 'solana-routing-key-0001';
const PLANS = { big: { dailyCredits: 1e12, creditsPerSecond: 1e9, failover: false } };
const KEYS = [{ key: KEY, id: 'dapp', plan: 'big' }];
const SOME_ADDRESS = '11111111111111111111111111111111';

/** A LiteSVM node at `startSlot` whose slots move only when the test moves them, served over HTTP. */
async function startNode(t: Test, startSlot: number): Promise<{ node: LiteSvmNode; server: LiteSvmServer }> {
  const node = new LiteSvmNode({ slotMs: 0, startSlot });
  const server = await startLiteSvmServer({ node });
  t.teardown(async () => { await server.stop(); node.stop(); });
  return { node, server };
}

type Answer = { result?: unknown; error?: { code: number; message: string } };

t.test('a call with minContextSlot goes only to a node known to have reached it', async (t) => {
  const a = await startNode(t, 1000);
  const relayA = await startCountingRelay(a.server.url);
  t.teardown(() => relayA.close());
  // b answers every call with "0x1": healthy, but its slot is unknown to the gateway.
  const b = await startChaosUpstream(undefined, 'echo');
  t.teardown(() => b.close());
  const gw = await startTestGateway(
    { plans: PLANS, keys: KEYS, networks: [{ name: 'sol', families: ['solana'], upstreams: [{ name: 'a', url: relayA.url }, { name: 'b', url: b.url }] }], failover: { probe: { intervalMs: 50, timeoutMs: 1_000 }, maxLagBlocks: 1_000_000 } },
    [httpTransport(), solanaFamily()],
  );
  t.teardown(() => gw.close());
  const selector = gw.gateway.container.resolve(Tokens.UpstreamSelector) as FailoverSelector;
  await until('node a\'s slot known from its probes', () => upstreamView(selector, 'sol', 'a').head === 1000);
  const url = gw.url('sol', KEY);
  for (let i = 0; i < 6; i++) {
    const answer = (await post(url, rpc('getBalance', [SOME_ADDRESS, { commitment: 'processed', minContextSlot: 1050 }], i))).json as Answer;
    t.equal(answer.result, '0x1', `call ${i}: answered by b`);
  }
  t.equal(relayA.count('getBalance'), 0, 'node a (at slot 1000) was never asked');
  let servedByA = 0;
  for (let i = 0; i < 6; i++) {
    const answer = (await post(url, rpc('getBalance', [SOME_ADDRESS, { commitment: 'processed', minContextSlot: 900 }], i))).json as Answer;
    if (answer.result !== '0x1') servedByA++;
  }
  t.ok(servedByA > 0 && relayA.count('getBalance') === servedByA, 'a node past the slot takes its share');
});

t.test('a node whose slot stalls while it answers healthy leaves the rotation, and comes back once it catches up', async (t) => {
  const a = await startNode(t, 1000);
  const b = await startNode(t, 1000);
  const gw = await startTestGateway(
    { plans: PLANS, keys: KEYS, networks: [{ name: 'sol', families: ['solana'], upstreams: [{ name: 'a', url: a.server.url }, { name: 'b', url: b.server.url }] }], failover: { probe: { intervalMs: 50, timeoutMs: 1_000 }, maxLagBlocks: 5 } },
    [httpTransport(), solanaFamily()],
  );
  t.teardown(() => gw.close());
  const selector = gw.gateway.container.resolve(Tokens.UpstreamSelector) as FailoverSelector;
  await until('both slots known', () => upstreamView(selector, 'sol', 'a').head === 1000 && upstreamView(selector, 'sol', 'b').head === 1000);
  b.node.advance(20);
  await until('node a, stalled at 1000, is lagging', () => upstreamView(selector, 'sol', 'a').lagging);
  t.equal(((await post(a.server.url, rpc('getHealth', []))).json as Answer).result, 'ok', 'while node a says it is healthy');
  const client = createSolanaRpc(gw.url('sol', KEY));
  for (let i = 0; i < 4; i++) t.ok((await client.getSlot({ commitment: 'processed' }).send()) >= 1020n, 'every answer from node b');
  a.node.advance(20);
  await until('node a back in rotation', () => !upstreamView(selector, 'sol', 'a').lagging);
});

t.test('context.slot never goes backwards for a client, per commitment, across nodes', async (t) => {
  const a = await startNode(t, 1000);
  const b = await startNode(t, 1100);
  const gw = await startTestGateway(
    { plans: PLANS, keys: KEYS, networks: [{ name: 'sol', families: ['solana'], upstreams: [{ name: 'a', url: a.server.url }, { name: 'b', url: b.server.url }] }], failover: { probe: { intervalMs: 0, timeoutMs: 1_000 }, maxLagBlocks: 1_000_000 } },
    [httpTransport(), solanaFamily()],
  );
  t.teardown(() => gw.close());
  const client = createSolanaRpc(gw.url('sol', KEY));
  for (const commitment of ['processed', 'confirmed', 'finalized'] as const) {
    const seen: bigint[] = [];
    for (let i = 0; i < 8; i++) {
      const methods = [
        async () => (await client.getBalance(SOME_ADDRESS as never, { commitment }).send()).context.slot,
        async () => (await client.getLatestBlockhash({ commitment }).send()).context.slot,
        async () => (await client.getAccountInfo(SOME_ADDRESS as never, { commitment }).send()).context.slot,
      ];
      seen.push(await methods[i % methods.length]!());
    }
    t.ok(seen.every((slot, i) => i === 0 || slot >= seen[i - 1]!), `${commitment}: ${seen.join(' ')} never goes down`);
    t.ok(seen.slice(-3).every((slot) => slot >= b.node.slot(commitment)), `${commitment}: the answers come from the node ahead`);
  }
});

t.test('sendTransaction is never sent to a second node once the first may have it', async (t) => {
  const a = await startNode(t, 1000);
  const b = await startNode(t, 1000);
  const dying = await startChaosUpstream(a.server.url);
  t.teardown(() => dying.close());
  const second = await startChaosUpstream(b.server.url);
  t.teardown(() => second.close());
  const gw = await startTestGateway(
    { plans: PLANS, keys: KEYS, networks: [{ name: 'sol', families: ['solana'], upstreams: [{ name: 'a', url: dying.url }, { name: 'b', url: second.url, weight: 1e-6 }], options: { solana: { airdrop: true } } }], failover: { probe: { intervalMs: 0, timeoutMs: 1_000 }, maxLagBlocks: 1_000_000 } },
    [httpTransport(), solanaFamily()],
  );
  t.teardown(() => gw.close());
  const ledger = gw.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);
  const payer = await generateKeyPairSigner();
  const { blockhash } = a.node.latestBlockhash('processed');
  const transfer = await signTransfer(payer, (await generateKeyPairSigner()).address, 1n, { blockhash: blockhash as never, lastValidBlockHeight: 10_000n });
  second.received.length = 0;
  dying.mode = 'die';
  const lost = await post(gw.url('sol', KEY), rpc('sendTransaction', [transfer.base64, { encoding: 'base64', skipPreflight: true }]));
  t.equal(dying.received.filter((m) => m === 'sendTransaction').length, 1, 'node a received it, and the connection died');
  t.same(second.received.filter((m) => m === 'sendTransaction'), [], 'node b was not sent it');
  t.equal(lost.status, 503);
  t.match((lost.json as Answer).error, { code: -33503, message: /not sent twice/ });
  t.equal((await ledger.balance('dapp', 1e12, new Date(gw.gateway.clock.now()))).used, 0, 'the unanswered send is not charged');
});

t.test('the same transaction sent through two instances sharing Redis is answered twice and charged once', async (t) => {
  if (!(await redisAvailable())) return t.fail('redis-server is not installed');
  const redis = await startRedisServer();
  t.teardown(() => redis.stop());
  const { node, server } = await startNode(t, 1000);
  const config = { plans: PLANS, keys: KEYS, networks: [{ name: 'sol', families: ['solana'], upstreams: [{ url: server.url }], options: { solana: { airdrop: true } } }], plugins: { 'ledger-redis': { url: redis.url, prefix: 'sol-resend:' } } };
  const gateways = [await startTestGateway(config, [ledgerRedis(), httpTransport(), solanaFamily()]), await startTestGateway(config, [ledgerRedis(), httpTransport(), solanaFamily()])];
  t.teardown(() => Promise.all(gateways.map((g) => g.close())));
  const [one, two] = gateways.map((g) => createSolanaRpc(devnet(g.url('sol', KEY)))) as [ReturnType<typeof createSolanaRpc<ReturnType<typeof devnet>>>, ReturnType<typeof createSolanaRpc<ReturnType<typeof devnet>>>];
  const payer = await generateKeyPairSigner();
  const airdrop = await one.requestAirdrop(payer.address, lamports(1_000_000_000n)).send();
  await until('the airdrop confirmed', async () => {
    node.advance(1);
    return (await one.getSignatureStatuses([airdrop]).send()).value[0]?.confirmationStatus === 'confirmed';
  });
  const { value: blockhash } = await one.getLatestBlockhash({ commitment: 'confirmed' }).send();
  const transfer = await signTransfer(payer, (await generateKeyPairSigner()).address, 1_000_000n, blockhash);
  const ledger = gateways[0]!.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);
  const used = async (): Promise<number> => (await ledger.balance('dapp', 1e12, new Date(gateways[0]!.gateway.clock.now()))).used;
  const before = await used();
  const answers = [
    await one.sendTransaction(transfer.base64 as never, { encoding: 'base64' }).send(),
    await two.sendTransaction(transfer.base64 as never, { encoding: 'base64' }).send(),
    await two.sendTransaction(transfer.base64 as never, { encoding: 'base64', skipPreflight: true }).send(),
  ];
  t.same(answers, [transfer.signature, transfer.signature, transfer.signature], 'every send answered with the signature');
  t.equal(await used() - before, SOLANA_CREDITS.write, 'charged once across both instances');
  node.advance(1);
  const status = await one.getSignatureStatuses([transfer.signature as Signature], { searchTransactionHistory: true }).send();
  t.equal(status.value[0]?.err, null, 'on chain once, without error');
});

t.test('one of two nodes killed mid-run: a kit client keeps reading, no error, the slot never goes down', async (t) => {
  const a = await startNode(t, 1000);
  const b = await startNode(t, 1000);
  const gw = await startTestGateway(
    { plans: PLANS, keys: KEYS, networks: [{ name: 'sol', families: ['solana'], upstreams: [{ name: 'a', url: a.server.url }, { name: 'b', url: b.server.url }] }], failover: { probe: { intervalMs: 50, timeoutMs: 1_000 }, maxLagBlocks: 1_000_000 } },
    [httpTransport(), solanaFamily()],
  );
  t.teardown(() => gw.close());
  const client = createSolanaRpc(gw.url('sol', KEY));
  const slots: bigint[] = [];
  for (let i = 0; i < 20; i++) {
    if (i === 6) await a.server.stop(); // node a is gone: its port refuses connections
    a.node.advance(1);
    b.node.advance(1);
    slots.push(await client.getSlot({ commitment: 'processed' }).send());
    t.ok((await client.getLatestBlockhash({ commitment: 'confirmed' }).send()).value.blockhash.length > 30);
  }
  t.ok(slots.every((slot, i) => i === 0 || slot >= slots[i - 1]!), `the slot never went down: ${slots.join(' ')}`);
});
