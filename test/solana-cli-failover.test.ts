/**
 * `tollgate start` in front of two Solana nodes of one chain, one of them killed mid-run, driven by
 * `@solana/kit` as a dApp would: reads keep answering (no error beyond the documented kinds), the slot a
 * client reads or is notified of never goes backwards, a pending `signatureSubscribe` fires exactly
 * once, and a transfer sent and confirmed after the kill goes through on the node that is left.
 *
 * The two devnet nodes start from one genesis and the test moves them one slot on together (a clock,
 * every 100 ms), so they share blockhashes; what a real cluster's gossip does for a transaction, the test
 * does by handing the same airdrop to both.
 */
import t from 'tap';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  appendTransactionMessageInstruction, assertIsTransactionWithBlockhashLifetime, createSolanaRpc, createSolanaRpcSubscriptions,
  createTransactionMessage, generateKeyPairSigner, getBase64EncodedWireTransaction, getSignatureFromTransaction, pipe,
  sendAndConfirmTransactionFactory, setTransactionMessageFeePayerSigner, setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners, type Address, type KeyPairSigner,
} from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { startLiteSvmInstance, type LiteSvmInstance } from '@tollgate/devnet';
import { startServing } from './helpers/example-process.js';
import { TSX_NODE_ARGS } from './helpers/tsx-node-args.js';
import { documentedErrorKinds } from './fleet/documented-errors.js';
import { post, rpc as jsonRpc } from './helpers/json-rpc.js';
import { until } from './helpers/until.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const dir = await mkdtemp(join(tmpdir(), 'tollgate-solana-cli-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
const KEY = 'sol-cli-failover-key-01';

const nodes: LiteSvmInstance[] = await Promise.all(['a', 'b'].map((n) => startLiteSvmInstance(`litesvm#cli-${n}`, { slotMs: 0 })));
const killed = new Set<LiteSvmInstance>();
t.teardown(() => Promise.all(nodes.filter((n) => !killed.has(n)).map((n) => n.stop())));
const clock = setInterval(() => { for (const n of nodes) if (!killed.has(n)) n.node.advance(); }, 100);
t.teardown(() => clearInterval(clock));

const config = join(dir, 'gateway.yaml');
await writeFile(config, [
  'keys:',
  `  - { key: ${KEY}, plan: growth }`,
  'networks:',
  '  - name: solana',
  '    families: [solana]',
  '    upstreams:',
  ...nodes.map((n, i) => `      - { name: node-${i}, url: ${n.url}, wsUrl: ${n.wsUrl} }`),
  '',
].join('\n'));
const gateway = await startServing('tollgate start', root, process.execPath, [...TSX_NODE_ARGS, 'examples/gateway/main.ts', 'start', '--config', config, '--data-dir', dir, '--log-level', 'silent'], { TOLLGATE_ADMIN_TOKEN: '', TOLLGATE_REDIS_URL: '' });
t.teardown(() => gateway.stop());

const rpc = createSolanaRpc(`${gateway.origin}/solana/v3/${KEY}`);
const rpcSubscriptions = createSolanaRpcSubscriptions(`${gateway.origin.replace('http', 'ws')}/solana/ws/v3/${KEY}`);
const documented = documentedErrorKinds();

/** A signed transfer of `amount` lamports from `payer` to `to`, on the blockhash the gateway gives. */
async function transfer(payer: KeyPairSigner, to: Address, amount: bigint) {
  const { value: blockhash } = await rpc.getLatestBlockhash({ commitment: 'processed' }).send();
  const signed = await signTransactionMessageWithSigners(pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
    (m) => appendTransactionMessageInstruction(getTransferSolInstruction({ source: payer, destination: to, amount }), m),
  ));
  assertIsTransactionWithBlockhashLifetime(signed);
  return signed;
}

t.test('one of two nodes killed mid-run: reads go on, slots never go back, a pending signature fires once', async (t) => {
  t.type(await rpc.getSlot().send(), 'bigint', 'getSlot');
  t.type(await rpc.getBlockHeight().send(), 'bigint', 'getBlockHeight');
  const rent = await rpc.getMinimumBalanceForRentExemption(0n).send();
  const payer = await generateKeyPairSigner();
  const recipient = await generateKeyPairSigner();
  for (const n of nodes) {
    const answer = (await post(n.url, jsonRpc('requestAirdrop', [payer.address, 2_000_000_000]))).json as { result?: string };
    t.type(answer.result, 'string', 'the airdrop, on each node');
  }
  await until('the payer is funded as the gateway sees it', async () => (await rpc.getBalance(payer.address, { commitment: 'confirmed' }).send()).value === 2_000_000_000n);

  // Reads all along, from before the kill to after it: each answer or a documented error.
  const errors = new Map<string, number>();
  const readSlots: bigint[] = [];
  let reading = true;
  const reader = (async () => {
    while (reading) {
      // Plain HTTP, to see the gateway's own code on a refusal (kit reports only the HTTP status).
      const answer = await post(`${gateway.origin}/solana/v3/${KEY}`, jsonRpc('getSlot', [{ commitment: 'processed' }]));
      const body = answer.json as { result?: number; error?: { code: number } } | undefined;
      if (body?.result !== undefined) readSlots.push(BigInt(body.result));
      else {
        const kind = `rpc ${body?.error?.code ?? "none"}/${answer.status}`;
        errors.set(kind, (errors.get(kind) ?? 0) + 1);
      }
    }
  })();
  t.teardown(async () => { reading = false; await reader; });

  const abort = new AbortController();
  t.teardown(() => abort.abort());
  const first = await transfer(payer, recipient.address, rent + 1_000_000n);
  const signature = getSignatureFromTransaction(first);
  // Which node serves the client's signature subscription: the one whose pubsub gained a subscription.
  const before = nodes.map((n) => n.server.pubsub.size);
  const signatureEvents = await rpcSubscriptions.signatureNotifications(signature, { commitment: 'confirmed' }).subscribe({ abortSignal: abort.signal });
  const outcomes: unknown[] = [];
  const watchingSignature = (async () => { for await (const outcome of signatureEvents) outcomes.push(outcome); })().catch(() => {});
  await until('a node serves the signature subscription', () => nodes.some((n, i) => n.server.pubsub.size > before[i]!));
  const serving = nodes.find((n, i) => n.server.pubsub.size > before[i]!)!;
  const other = nodes.find((n) => n !== serving)!;
  const slotEvents = await rpcSubscriptions.slotNotifications().subscribe({ abortSignal: abort.signal });
  const notifiedSlots: bigint[] = [];
  const watchingSlots = (async () => { for await (const s of slotEvents) notifiedSlots.push(s.slot); })().catch(() => {});
  await until('slots are notified', () => notifiedSlots.length > 2);

  // The transfer lands on the other node only (the serving one never sees it), and is confirmed there.
  await post(other.url, jsonRpc('sendTransaction', [getBase64EncodedWireTransaction(first), { encoding: 'base64' }]));
  await until('the other node has it confirmed', async () => {
    const statuses = (await post(other.url, jsonRpc('getSignatureStatuses', [[signature]]))).json as { result: { value: Array<{ confirmationStatus: string } | null> } };
    return /confirmed|finalized/.test(statuses.result.value[0]?.confirmationStatus ?? '');
  });
  t.same(outcomes, [], 'no outcome yet: the serving node never saw the transaction');

  killed.add(serving);
  await serving.stop();
  await until('the pending signature fires, from the node that is left', () => outcomes.length > 0, 30_000);
  const slotAfterKill = other.node.slot('processed');
  await until('slots after the kill are notified', () => notifiedSlots.some((s) => s >= slotAfterKill + 5n), 30_000);
  await until('reads after the kill answer', () => readSlots.some((s) => s >= slotAfterKill + 5n), 30_000);
  t.equal(outcomes.length, 1, 'the pending signatureSubscribe fired once');
  t.match(outcomes[0], { value: { err: null } }, 'a success');

  // A transfer sent and confirmed through the gateway after the kill.
  const second = await transfer(payer, recipient.address, 1_000_000n);
  await sendAndConfirmTransactionFactory({ rpc, rpcSubscriptions })(second, { commitment: 'confirmed' });
  t.equal((await rpc.getBalance(recipient.address, { commitment: 'confirmed' }).send()).value, rent + 2_000_000n, 'both transfers on the node that is left');

  reading = false;
  await reader;
  abort.abort();
  await Promise.all([watchingSignature, watchingSlots]);
  t.ok(readSlots.every((s, i) => i === 0 || s >= readSlots[i - 1]!), `the slot read never goes backwards (${readSlots.length} reads)`);
  t.ok(notifiedSlots.every((s, i) => i === 0 || s > notifiedSlots[i - 1]!), `notified slots only go forward (${notifiedSlots.length})`);
  t.same([...errors.keys()].filter((kind) => !documented.has(kind)), [], `no client error beyond the documented kinds (${JSON.stringify(Object.fromEntries(errors))})`);
});
