import t from 'tap';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createWalletClient, http, parseEther, keccak256, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import { Tokens } from '../core/plugin-api.js';
import { type CreditLedger, type UsageRecorder } from '../core/store-api.js';
import { type GatewayConfigInput } from '../core/index.js';
import { startAnvil, type AnvilInstance } from '@tollgate/devnet';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { saysAlreadySent } from '../plugins/evm/resent-transaction.js';
import { startTestGateway } from './helpers/gateway.js';
import { startGatewayProcess, type GatewayProcess } from './helpers/gateway-process.js';
import { redisAvailable, startRedisServer } from './helpers/redis-server.js';
import { startChaosUpstream } from './helpers/failover-upstreams.js';
import { post, rpc } from './helpers/json-rpc.js';
import { until } from './helpers/until.js';
import { createRedisStore } from '../plugins/ledger-redis/index.js';

// Anvil's first dev account, and a recipient.
const sender = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80');
const RECIPIENT = '0x70997970c51812dc3a010c7d01b50e0d2a9d42c8';
const KEY = 'send-raw-tx-key-000001';
const COST = 720; // eth_sendRawTransaction's credits
const PLANS = { big: { dailyCredits: 1e12, creditsPerSecond: 1e9, failover: false } };
const KEYS = [{ key: KEY, id: 'sender', plan: 'big' }];

/** A transfer signed with viem against `node` (nonce `nonce`), as a wallet would send it. */
async function signTransfer(node: AnvilInstance, nonce: number, ether = '1'): Promise<Hex> {
  const wallet = createWalletClient({ account: sender, chain: foundry, transport: http(node.url) });
  const request = await wallet.prepareTransactionRequest({ to: RECIPIENT, value: parseEther(ether), nonce });
  return wallet.signTransaction(request);
}

interface Sent {
  readonly status: number;
  readonly result?: string;
  readonly error?: { code: number; message: string };
}

/** The UTC day of a gateway's clock (`YYYY-MM-DD`), for its usage. */
function today(gw: { gateway: { clock: { now(): number } } }): string {
  return new Date(gw.gateway.clock.now()).toISOString().slice(0, 10);
}

async function send(url: string, raw: Hex): Promise<Sent> {
  const answer = await post(url, rpc('eth_sendRawTransaction', [raw]));
  return { status: answer.status, ...(answer.json as object) };
}

/** How many transactions from the sender the node has mined. */
async function minedFrom(node: AnvilInstance): Promise<number> {
  return Number.parseInt(await node.rpc<string>('eth_getTransactionCount', [sender.address, 'latest']), 16);
}

t.test('every major client\'s words for a resent transaction are recognised, other errors are not', async (t) => {
  for (const message of ['already known', 'nonce too low: next nonce 5, tx nonce 4', 'AlreadyKnown', 'OldNonce, Current nonce: 5, nonce of rejected tx: 4', 'NonceTooLow', 'Known transaction', 'Nonce too low', 'transaction already imported', 'transaction already exists in the pool', 'ALREADY_KNOWN']) {
    t.ok(saysAlreadySent({ code: -32000, message }), message);
  }
  for (const message of ['replacement transaction underpriced', 'insufficient funds for gas * price + value', 'intrinsic gas too low', 'nonce too high', 'execution reverted']) {
    t.notOk(saysAlreadySent({ code: -32000, message }), message);
  }
});

t.test('a transaction sent twice through one gateway is answered with its hash both times, mined once and charged once', async (t) => {
  const node = await startAnvil();
  t.teardown(() => node.stop());
  const gw = await startTestGateway({ plans: PLANS, keys: KEYS, networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: node.url }] }] }, [httpTransport(), evmFamily()]);
  t.teardown(() => gw.close());
  const ledger = gw.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);
  const used = async (): Promise<number> => (await ledger.balance('sender', 1e12, new Date(gw.gateway.clock.now()))).used;

  const raw = await signTransfer(node, 0);
  const hash = keccak256(raw);
  const first = await send(gw.url('eth', KEY), raw);
  t.same(first, { status: 200, jsonrpc: '2.0', id: 1, result: hash }, 'the first send is answered with the hash');
  // Anvil mines at once: the same bytes now get "nonce too low" from the node.
  t.match(await node.rpc('eth_sendRawTransaction', [raw]).catch((e: Error) => e.message), /nonce too low/, 'the node itself refuses the resend');
  const second = await send(gw.url('eth', KEY), raw);
  t.same(second, { status: 200, jsonrpc: '2.0', id: 1, result: hash }, 'the resend through the gateway gets the same hash');
  t.equal(await minedFrom(node), 1, 'the transaction is on chain once');
  t.equal(await used(), COST, 'one transaction, one answer, one charge: the resend within the window and the hash check are not charged');
  const usage = (await gw.gateway.container.resolve<UsageRecorder>(Tokens.UsageRecorder).usage!('sender', today(gw)))['eth_sendRawTransaction'];
  t.match(usage, { calls: 2, credits: COST }, 'usage: two calls, one charge');

  // Another transaction with the nonce already used: the node does not know its hash, so its error stands.
  const other = await signTransfer(node, 0, '2');
  const refused = await send(gw.url('eth', KEY), other);
  t.equal(refused.result, undefined);
  t.match(refused.error, { code: -32003, message: /nonce too low/ }, 'a different transaction with a used nonce gets the node\'s error');
  t.equal(await used(), 2 * COST, 'other signed bytes are another call, charged');
});

t.test('a resend while the first is still in the pool ("already imported") gets the hash, from two instances sharing Redis', async (t) => {
  if (!(await redisAvailable())) return t.fail('redis-server is not installed');
  const node = await startAnvil({ noMining: true });
  const redis = await startRedisServer();
  t.teardown(async () => { await node.stop(); await redis.stop(); });
  const config: GatewayConfigInput = { plans: PLANS, keys: KEYS, networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: node.url }] }], plugins: { 'ledger-redis': { url: redis.url, prefix: 'send-raw:' } } };
  const gateways: GatewayProcess[] = await Promise.all([startGatewayProcess({ store: 'redis', config }), startGatewayProcess({ store: 'redis', config })]);
  t.teardown(() => Promise.all(gateways.map((g) => g.kill())));
  const urls = gateways.map((g) => `${g.origin}/eth/v3/${KEY}`);

  const raw = await signTransfer(node, 0);
  const hash = keccak256(raw);
  // viem's own sendRawTransaction, as a wallet that resends after a timeout, through either instance.
  const clients = urls.map((url) => createWalletClient({ chain: foundry, transport: http(url, { retryCount: 0 }) }));
  const answers = [
    await clients[0]!.sendRawTransaction({ serializedTransaction: raw }),
    await clients[1]!.sendRawTransaction({ serializedTransaction: raw }),
    await clients[0]!.sendRawTransaction({ serializedTransaction: raw }),
  ];
  t.same(answers, [hash, hash, hash], 'both instances answer every send with the hash');
  t.match(await node.rpc('eth_sendRawTransaction', [raw]).catch((e: Error) => e.message), /already imported/, 'the node says "already imported"');
  await node.rpc('evm_mine', []);
  const block = await node.rpc<{ transactions: string[] }>('eth_getBlockByNumber', ['latest', false]);
  t.same(block.transactions, [hash], 'the mined block holds the transaction once');
  t.same(await clients[1]!.sendRawTransaction({ serializedTransaction: raw }), hash, 'after mining ("nonce too low") still the hash');
  t.equal(await minedFrom(node), 1);

  // The balance and usage the two instances share in Redis: four sends of one transaction, one charge.
  const store = createRedisStore({ url: redis.url, prefix: 'send-raw:' });
  await store.open();
  t.teardown(() => store.close());
  t.equal((await store.ledger.balance('sender', 1e12, new Date())).used, COST, 'one transaction, one charge, across both instances');
  const day = new Date().toISOString().slice(0, 10);
  await until('both instances flushed their usage', async () => (await store.usage.usage('sender', day))['eth_sendRawTransaction']?.calls === 4);
  t.match((await store.usage.usage('sender', day))['eth_sendRawTransaction'], { calls: 4, credits: COST }, 'usage: four calls, one charge');
});

t.test('the node dies between send and answer: the transaction is not sent to another node', async (t) => {
  const [a, b] = (await Promise.all([startAnvil(), startAnvil()])) as [AnvilInstance, AnvilInstance];
  t.teardown(() => Promise.all([a.stop(), b.stop()]));
  // In front of a: passes the call on, and once the node has taken the transaction, kills it before the answer.
  const received: string[] = [];
  const dying = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const method = (JSON.parse(body.toString('utf8')) as { method: string }).method;
      received.push(method);
      void fetch(a.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then(async (answer) => {
        const text = await answer.text();
        if (method === 'eth_sendRawTransaction') {
          a.process.kill('SIGKILL');
          res.socket?.destroy();
          return;
        }
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(text);
      }, () => res.socket?.destroy()); // the node is gone: so is the connection
    });
  });
  await new Promise<void>((resolve) => dying.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => { dying.closeAllConnections(); dying.close(() => resolve()); }).catch(() => undefined));
  const second = await startChaosUpstream(b.url);
  t.teardown(() => second.close());
  const gw = await startTestGateway(
    { plans: PLANS, keys: KEYS, networks: [{ name: 'eth', families: ['evm'], upstreams: [{ name: 'a', url: `http://127.0.0.1:${(dying.address() as AddressInfo).port}` }, { name: 'b', url: second.url, weight: 1e-6 }] }], failover: { probe: { intervalMs: 0, timeoutMs: 1_000 } } },
    [httpTransport(), evmFamily()],
  );
  t.teardown(() => gw.close());
  const ledger = gw.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);

  const raw = await signTransfer(a, 0);
  const hash = keccak256(raw);
  const lost = await send(gw.url('eth', KEY), raw);
  t.equal(received.filter((m) => m === 'eth_sendRawTransaction').length, 1, 'node a received the transaction');
  t.equal(await minedFrom(a).catch(() => 'gone'), 'gone', 'and died');
  t.same(second.received.filter((m) => m === 'eth_sendRawTransaction'), [], 'the gateway did not send it to node b');
  t.equal(lost.status, 503);
  t.match(lost.error, { code: -33503, message: /not sent twice: check its effect before sending it again/ });
  t.equal((await ledger.balance('sender', 1e12, new Date(gw.gateway.clock.now()))).used, 0, 'the unanswered call is not charged');
  // The dead node's address now refuses connections (nothing listens), which is safe to move on from.
  await new Promise<void>((resolve) => { dying.closeAllConnections(); dying.close(() => resolve()); });
  // The client sends it again, as told: now the live node takes it, once.
  t.same((await send(gw.url('eth', KEY), raw)).result, hash);
  t.same((await send(gw.url('eth', KEY), raw)).result, hash, 'and a third send is answered with the hash too');
  t.equal(second.received.filter((m) => m === 'eth_sendRawTransaction').length, 2, 'node b saw only the client\'s two sends');
  t.equal(await minedFrom(b), 1, 'on chain once');
});
