import t from 'tap';
import { devnet } from '@tollgate/devnet';
import { Tokens, keyIdOf } from '../core/plugin-api.js';
import { type CreditLedger, type UsageRecorder } from '../core/store-api.js';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { wsTransport, type WsTransport } from '../plugins/ws/index.js';
import { startTestGateway } from './helpers/gateway.js';
import { openWs, type RawWsClient } from './helpers/ws-client.js';
import { post, rpc } from './helpers/json-rpc.js';
import { until } from './helpers/until.js';

// Subscriptions over the WebSocket transport against a real Anvil (the devnet, mining on demand).
const KEY = 'subscriber-key-000001';
const TINY = 'tiny-key-000000000001';
const CAPPED = 'capped-key-0000000001';
const STUCK = 'stuck-key-00000000001';
const dev = devnet({ seed: false });
const gw = await startTestGateway({
  plans: { tiny: { dailyCredits: 5 + 3 * 50, creditsPerSecond: 10_000, failover: false } },
  keys: [{ key: KEY, plan: 'growth' }, { key: TINY, plan: 'tiny' }, { key: CAPPED, plan: 'growth' }, { key: STUCK, plan: 'growth' }],
  networks: [{ name: 'eth', families: ['evm'], upstreams: [{ embedded: 'anvil' }] }],
}, [httpTransport(), // A paused client cannot answer keep-alive pings: the pings are spaced beyond the test's length.
  wsTransport({ pingIntervalMs: 600_000, subscriptions: { maxPerConnection: 60, closeTimeoutMs: 60_000 } }), evmFamily(), dev]);
t.teardown(() => gw.close());
const anvil = dev.instance('anvil#default')!.anvil;
const transport = gw.gateway.container.resolveAll(Tokens.Transport).find((x) => x.name === 'ws') as WsTransport;
const service = transport.subscriptions;
const ws = (key = KEY): string => `${gw.origin.replace('http', 'ws')}/eth/ws/v3/${key}`;
const mine = (blocks: number): Promise<unknown> => anvil.rpc('anvil_mine', [`0x${blocks.toString(16)}`]);
const head = async (): Promise<number> => Number.parseInt(await anvil.rpc<string>('eth_blockNumber'), 16);

type Message = { id?: number; result?: unknown; error?: { code: number; message: string }; method?: string; params?: { subscription: string; result: { number: string } } };
const notifications = (client: RawWsClient, id: string): Message[] => (client.messages as Message[]).filter((m) => m.params?.subscription === id);

async function subscribe(client: RawWsClient, params: unknown[]): Promise<string> {
  const id = Math.floor(Math.random() * 1e9);
  client.send({ jsonrpc: '2.0', id, method: 'eth_subscribe', params });
  for (;;) {
    const answer = (client.messages as Message[]).find((m) => m.id === id);
    if (answer !== undefined) {
      if (answer.error !== undefined) throw new Error(`${answer.error.code} ${answer.error.message}`);
      return answer.result as string;
    }
    await client.waitFor(client.messages.length + 1);
  }
}

/** Waits until `check` holds, re-checking on each message the client gets. */
async function untilMessage(client: RawWsClient, check: () => boolean): Promise<void> {
  while (!check()) await client.waitFor(client.messages.length + 1);
}

t.test('newHeads: one upstream subscription for every subscriber; each gets every block once, in order', async (t) => {
  const a = await openWs(ws());
  const b = await openWs(ws());
  t.teardown(() => { a.close(); b.close(); });
  const [ida, idb] = await Promise.all([subscribe(a, ['newHeads']), subscribe(b, ['newHeads'])]);
  t.match(ida, /^0x[0-9a-f]{32}$/, 'a geth-style subscription id');
  t.equal(service.streams, 1, 'both share one stream');
  t.equal(service.upstreamSubscriptions, 1, 'and one upstream subscription');
  const start = await head();
  await mine(5);
  await untilMessage(a, () => notifications(a, ida).length === 5);
  await untilMessage(b, () => notifications(b, idb).length === 5);
  const numbers = (m: Message[]): number[] => m.map((n) => Number.parseInt(n.params!.result.number, 16));
  const expected = [1, 2, 3, 4, 5].map((i) => start + i);
  t.same(numbers(notifications(a, ida)), expected);
  t.same(numbers(notifications(b, idb)), expected);
});

t.test('unsubscribe and disconnect release the upstream subscription', async (t) => {
  const a = await openWs(ws());
  const b = await openWs(ws());
  t.teardown(() => { a.close(); b.close(); });
  const ida = await subscribe(a, ['newHeads']);
  await subscribe(b, ['newHeads']);
  const filter = { address: '0x00000000000000000000000000000000000000AA', topics: [null] };
  const idLogs = await subscribe(a, ['logs', filter]);
  await subscribe(b, ['logs', { address: ['0x00000000000000000000000000000000000000aa'] }]);
  t.equal(service.streams, 2, 'equal filters written differently share a stream');
  t.equal(service.upstreamSubscriptions, 2);
  a.send({ jsonrpc: '2.0', id: 77, method: 'eth_unsubscribe', params: [ida] });
  await untilMessage(a, () => (a.messages as Message[]).some((m) => m.id === 77));
  t.equal((a.messages as Message[]).find((m) => m.id === 77)!.result, true, 'unsubscribe answers true');
  a.send({ jsonrpc: '2.0', id: 78, method: 'eth_unsubscribe', params: [ida] });
  await untilMessage(a, () => (a.messages as Message[]).some((m) => m.id === 78));
  t.equal((a.messages as Message[]).find((m) => m.id === 78)!.result, false, 'a second unsubscribe answers false');
  t.equal(service.upstreamSubscriptions, 2, 'b still holds newHeads');
  a.send({ jsonrpc: '2.0', id: 79, method: 'eth_unsubscribe', params: [idLogs] });
  await untilMessage(a, () => (a.messages as Message[]).some((m) => m.id === 79));
  b.close();
  await b.closed;
  await t.resolves(until('the upstream subscriptions close', () => service.upstreamSubscriptions === 0 && service.streams === 0), 'the last subscriber leaving closes the upstream subscriptions');
});

t.test('credits: 5 per eth_subscribe, 50 per newHeads event; the quota close comes after the last event paid for', async (t) => {
  const ledger = gw.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);
  const usage = gw.gateway.container.resolve<UsageRecorder>(Tokens.UsageRecorder);
  const id = keyIdOf(TINY);
  const client = await openWs(ws(TINY));
  t.teardown(() => client.close());
  const sub = await subscribe(client, ['newHeads']);
  t.equal((await ledger.balance(id, 155, new Date())).used, 5, 'eth_subscribe costs 5');
  await mine(5);
  t.equal(await client.closed, 4402, 'closed with 4402');
  t.equal(notifications(client, sub).length, 3, 'the three events the balance paid for arrived');
  t.equal((await ledger.balance(id, 155, new Date())).used, 155, 'charged 5 + 3 x 50, nothing more');
  const day = new Date().toISOString().slice(0, 10);
  const totals = await usage.usage!(id, day);
  t.same({ calls: totals['eth_subscription:newHeads']?.calls, credits: totals['eth_subscription:newHeads']?.credits }, { calls: 3, credits: 150 }, 'usage counts the events');
});

t.test('subscriptions need a WebSocket; bad params and caps get documented errors, uncharged', async (t) => {
  const http = await post(gw.url('eth', KEY), rpc('eth_subscribe', ['newHeads']));
  t.match(http.json, { error: { code: -32601 } }, 'not over HTTP');
  const client = await openWs(ws(CAPPED));
  t.teardown(() => client.close());
  await t.rejects(subscribe(client, ['newBlocks']), /-32602/);
  await t.rejects(subscribe(client, ['logs', { fromBlock: '0x1' }]), /-32602/);
  await t.rejects(subscribe(client, ['newPendingTransactions', true]), /-32602/);
  await t.rejects(subscribe(client, ['newHeads', {}]), /-32602/);
  for (let i = 0; i < 60; i++) await subscribe(client, ['newHeads']);
  await t.rejects(subscribe(client, ['newHeads']), /-32005 subscription limit reached: this connection holds 60/);
  const ledger = gw.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);
  t.equal((await ledger.balance(keyIdOf(CAPPED), 200_000_000, new Date())).used, 60 * 5, 'refused subscribes cost nothing');
});

t.test('1,000 subscribers on one upstream subscription; a subscriber that never reads is closed and holds no one up', async (t) => {
  const clients = await Promise.all(Array.from({ length: 20 }, () => openWs(ws())));
  t.teardown(() => { for (const c of clients) c.close(); });
  const ids = await Promise.all(clients.map((c) => Promise.all(Array.from({ length: 50 }, () => subscribe(c, ['newHeads'])))));
  await t.rejects(subscribe(clients[0]!, ['newHeads']), /-32005 subscription limit reached: this key holds 1000 subscriptions \(limit 1000\)/, 'the per-key cap');
  const stuck = await openWs(ws(STUCK));
  t.teardown(() => stuck.close());
  const stuckIds = await Promise.all(Array.from({ length: 50 }, () => subscribe(stuck, ['newHeads'])));
  stuck.socket.pause();
  t.equal(service.upstreamSubscriptions, 1, '1,050 subscribers, one upstream subscription');
  // Once the gateway gives up on it (its subscriptions are dropped and the 4408 close is sent, queued behind
  // what it has not read), the client starts reading again, well inside the close handshake's timeout.
  let connectionsWhileClosing = -1;
  const gaveUp = until('the stuck key holds no subscription', () => service.held(keyIdOf(STUCK)) === 0, 120_000).then(() => {
    connectionsWhileClosing = transport.connections;
    stuck.socket.resume();
  });
  const start = await head();
  // Blocks come five at a time, the next five once every reading subscriber has the last: the one that
  // reads nothing falls behind by 50 notifications a block until its bound is reached.
  const blocks = 200;
  for (let mined = 5; mined <= blocks; mined += 5) {
    await mine(5);
    await Promise.all(clients.map((c, i) => untilMessage(c, () => ids[i]!.every((id) => notifications(c, id).length === mined))));
  }
  const expected = Array.from({ length: blocks }, (_, k) => start + 1 + k);
  let checked = 0;
  const wrong: string[] = [];
  for (const [i, c] of clients.entries()) {
    for (const id of ids[i]!) {
      checked++;
      const numbers = notifications(c, id).map((n) => Number.parseInt(n.params!.result.number, 16));
      if (numbers.length !== expected.length || numbers.some((n, k) => n !== expected[k])) wrong.push(id);
    }
  }
  t.equal(checked, 1000, 'every reading subscriber was checked');
  t.same(wrong, [], 'all 1,000 got all blocks, in order, once');
  await gaveUp;
  t.equal(connectionsWhileClosing, 21, 'the gateway is closing it: the close frame waits behind what it has not read');
  t.equal(await stuck.closed, 4408, 'the never-reading subscriber was closed with 4408');
  t.ok(stuckIds.every((id) => notifications(stuck, id).length < blocks), 'it got less than everything');
});

