import t from 'tap';
import { startLiteSvmInstance } from '@tollgate/devnet';
import { Tokens, keyIdOf } from '../core/plugin-api.js';
import { type CreditLedger, type UsageRecorder } from '../core/store-api.js';
import { request } from 'undici';
import { admin } from '../plugins/admin/index.js';
import { httpTransport } from '../plugins/http/index.js';
import { ledgerSqlite } from '../plugins/ledger-sqlite/index.js';
import { solanaFamily } from '../plugins/solana/index.js';
import { wsTransport, type WsTransport } from '../plugins/ws/index.js';
import { startTestGateway } from './helpers/gateway.js';
import { post, rpc } from './helpers/json-rpc.js';
import { notificationsOf, openWs, wsCall, type RawWsClient } from './helpers/ws-client.js';
import { until } from './helpers/until.js';

// The nine Solana subscriptions through the gateway's WebSocket, on the devnet's LiteSVM node and its own
// WebSocket: numeric ids, agave's notification shape, one upstream subscription per stream, every
// notification charged at its price, caps, and a signature's subscription that ends with its outcome.
const node = await startLiteSvmInstance('litesvm#subscriptions', { slotMs: 0 });
t.teardown(() => node.stop());
t.ok(node.wsUrl, 'the devnet node has a WebSocket');
const ADMIN_TOKEN = 'sol-subs-admin-token-0123456789';
const keys = Array.from({ length: 6 }, (_, i) => `sol-subs-key-${String(i).padStart(8, '0')}`);
const gw = await startTestGateway({
  plans: { metered: { dailyCredits: 1_000_000_000, creditsPerSecond: 1_000_000, failover: false }, tiny: { dailyCredits: 8, creditsPerSecond: 1_000_000, failover: false } },
  keys: [...keys.map((key) => ({ key, plan: 'metered' })), { key: 'sol-subs-tiny-0000001', plan: 'tiny' }],
  networks: [{ name: 'solana', families: ['solana'], upstreams: [{ name: 'litesvm', url: node.url, wsUrl: node.wsUrl }] }],
  plugins: { admin: { token: ADMIN_TOKEN } },
}, [ledgerSqlite({ path: ':memory:' }), admin(), httpTransport(), wsTransport({ pingIntervalMs: 600_000, subscriptions: { maxPerConnection: 8, maxPerKey: 12 } }), solanaFamily()]);
t.teardown(() => gw.close());
const ledger = gw.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);
const usage = gw.gateway.container.resolve<UsageRecorder>(Tokens.UsageRecorder);
const service = (gw.gateway.container.resolveAll(Tokens.Transport).find((x) => x.name === 'ws') as WsTransport).subscriptions;
const used = async (key: string): Promise<number> => (await ledger.balance(keyIdOf(key), 1_000_000_000, new Date())).used;
const ws = (key: string): string => `${gw.origin.replace('http', 'ws')}/solana/ws/v3/${key}`;

async function connect(key: string): Promise<RawWsClient> {
  const client = await openWs(ws(key));
  t.teardown(() => client.socket.terminate());
  return client;
}

async function subscribe(client: RawWsClient, method: string, params: unknown[]): Promise<number> {
  const answer = await wsCall(client, method, params);
  if (answer.error !== undefined) throw new Error(`${answer.error.code} ${answer.error.message}`);
  return answer.result as number;
}

/** Airdrops `lamports` to `address` on the node itself; resolves with the signature. */
async function airdrop(address: string, lamports: number): Promise<string> {
  const res = await post(node.url, rpc('requestAirdrop', [address, lamports]));
  const body = res.json as { result?: string; error?: unknown };
  if (body.result === undefined) throw new Error(`airdrop failed: ${JSON.stringify(body.error)}`);
  return body.result;
}

const RECIPIENT = '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin';

t.test('slotSubscribe: numeric ids, agave notifications, one upstream subscription for two clients, 1 credit per slot', async (t) => {
  const [a, b] = await Promise.all([connect(keys[0]!), connect(keys[1]!)]);
  const [ida, idb] = await Promise.all([subscribe(a, 'slotSubscribe', []), subscribe(b, 'slotSubscribe', [])]);
  t.type(ida, 'number', 'the id is a number');
  t.not(ida, idb, 'ids are unique on the gateway');
  t.equal(service.upstreamSubscriptions, 1, 'two clients, one upstream subscription');
  for (let i = 0; i < 3; i++) node.node.advance();
  await until('both clients have three slots', () => notificationsOf(a, ida).length >= 3 && notificationsOf(b, idb).length >= 3);
  const slots = notificationsOf(a, ida) as Array<{ parent: number; root: number; slot: number }>;
  t.same(notificationsOf(b, idb), slots, 'the same events for both');
  t.ok(slots.every((s, i) => i === 0 || s.slot === slots[i - 1]!.slot + 1), 'each slot once, in order');
  t.match(slots[0], { parent: Number, root: Number, slot: Number });
  const raw = (a.messages as Array<{ method?: string }>).find((m) => m.method !== undefined);
  t.same(Object.keys(raw!).sort(), ['jsonrpc', 'method', 'params'], 'a notification: jsonrpc, method, params');
  t.match(raw, { jsonrpc: '2.0', method: 'slotNotification', params: { subscription: ida } });
  const n = notificationsOf(a, ida).length;
  t.equal(await wsCall(a, 'slotUnsubscribe', [ida]).then((r) => r.result), true, 'unsubscribe answers true');
  t.same((await wsCall(a, 'slotUnsubscribe', [ida])).error, { code: -32602, message: 'Invalid subscription id.' }, 'twice: an invalid id, as on a node');
  t.equal(await used(keys[0]!), 5 + n + 10, 'subscribe 5 + 1 per slot + unsubscribe 10 (the refused one is free)');
  const day = new Date().toISOString().slice(0, 10);
  const totals = await usage.usage!(keyIdOf(keys[0]!), day);
  t.same({ calls: totals.slotNotification?.calls, credits: totals.slotNotification?.credits }, { calls: n, credits: n }, 'usage: slotNotification, one credit each');
  t.equal(service.upstreamSubscriptions, 1, 'b still holds the stream');
  b.close();
  await b.closed;
  await until('the upstream subscription closes', () => service.upstreamSubscriptions === 0 && service.streams === 0);
});

t.test('accountSubscribe and signatureSubscribe see an airdrop; the signature subscription ends with its outcome, fired once', async (t) => {
  const client = await connect(keys[2]!);
  const account = await subscribe(client, 'accountSubscribe', [RECIPIENT, { commitment: 'processed', encoding: 'base64' }]);
  const same = await subscribe(client, 'accountSubscribe', [RECIPIENT, { encoding: 'base64', commitment: 'processed', dataSlice: null }]);
  t.equal(service.streams, 1, 'the same account written two ways: one stream');
  const signature = await airdrop(RECIPIENT, 1_000_000_000);
  const sig = await subscribe(client, 'signatureSubscribe', [signature, { commitment: 'confirmed' }]);
  await until('the airdrop is seen', async () => {
    node.node.advance();
    return notificationsOf(client, account).length >= 1 && notificationsOf(client, sig).length >= 1;
  });
  t.match(notificationsOf(client, account)[0], { context: { slot: Number }, value: { lamports: 1_000_000_000, owner: '11111111111111111111111111111111' } });
  t.same(notificationsOf(client, same), notificationsOf(client, account), 'both subscriptions got it');
  t.equal(notificationsOf(client, sig).length, 1, 'one outcome');
  t.match(notificationsOf(client, sig)[0], { context: { slot: Number }, value: { err: null } }, 'a success');
  await until('the signature subscription is gone', () => service.held(keyIdOf(keys[2]!)) === 2);
  for (let i = 0; i < 3; i++) node.node.advance();
  t.equal(notificationsOf(client, sig).length, 1, 'fired once');
  t.same((await wsCall(client, 'signatureUnsubscribe', [sig])).error, { code: -32602, message: 'Invalid subscription id.' }, 'ended, as a node ends it');
  const events = notificationsOf(client, account).length * 2;
  t.equal(await used(keys[2]!), 3 * 5 + events * 20 + 20, 'three subscribes at 5, each account notification 20, the outcome 20');
  client.close();
  await client.closed;
  await until('the account stream closes', () => service.streams === 0);
});

t.test('every subscription opens on the node', async (t) => {
  const client = await connect(keys[3]!);
  const opened = await Promise.all([
    subscribe(client, 'blockSubscribe', ['all', { commitment: 'confirmed', transactionDetails: 'signatures' }]),
    subscribe(client, 'logsSubscribe', ['all']),
    subscribe(client, 'programSubscribe', ['11111111111111111111111111111111', { encoding: 'base64' }]),
    subscribe(client, 'rootSubscribe', []),
    subscribe(client, 'slotsUpdatesSubscribe', []),
    subscribe(client, 'voteSubscribe', []),
  ]);
  t.ok(opened.every((id) => typeof id === 'number'), 'six numeric ids');
  t.equal(service.streams, 6);
  await airdrop(RECIPIENT, 1_000_000_000);
  await until('blocks, logs, program changes and roots arrive', async () => {
    node.node.advance();
    return [0, 1, 2, 3].every((i) => notificationsOf(client, opened[i]).length > 0);
  });
  t.match(notificationsOf(client, opened[0])[0], { context: { slot: Number }, value: { slot: Number } }, 'blockNotification');
  t.match(notificationsOf(client, opened[1])[0], { context: { slot: Number }, value: { signature: String, logs: Array } }, 'logsNotification');
  t.match(notificationsOf(client, opened[2])[0], { context: { slot: Number }, value: { pubkey: String, account: Object } }, 'programNotification');
  t.type(notificationsOf(client, opened[3])[0], 'number', 'rootNotification');
  for (const [i, method] of ['blockUnsubscribe', 'logsUnsubscribe', 'programUnsubscribe', 'rootUnsubscribe', 'slotsUpdatesUnsubscribe', 'voteUnsubscribe'].entries()) {
    t.equal((await wsCall(client, method, [opened[i]])).result, true, method);
  }
  await until('every stream closed', () => service.streams === 0);
});

t.test('caps per connection and per key; a balance that runs out closes with 4402 after what it paid for', async (t) => {
  const [a, b] = await Promise.all([connect(keys[4]!), connect(keys[4]!)]);
  for (let i = 0; i < 8; i++) await subscribe(a, 'slotSubscribe', []);
  t.match((await wsCall(a, 'rootSubscribe', [])).error, { code: -32005, message: /this connection holds 8 subscriptions \(limit 8\)/ });
  for (let i = 0; i < 4; i++) await subscribe(b, 'rootSubscribe', []);
  t.match((await wsCall(b, 'rootSubscribe', [])).error, { code: -32005, message: /this key holds 12 subscriptions \(limit 12\)/ });
  t.equal(await used(keys[4]!), 12 * 5, 'refusals cost nothing');
  const tiny = await connect('sol-subs-tiny-0000001');
  const id = await subscribe(tiny, 'slotSubscribe', []);
  node.node.advance();
  node.node.advance();
  node.node.advance();
  node.node.advance();
  t.equal(await tiny.closed, 4402, 'closed with 4402');
  t.equal(notificationsOf(tiny, id).length, 3, 'the three slots the balance paid for arrived');
  t.equal(await used('sol-subs-tiny-0000001'), 8, 'charged 5 + 3 x 1, nothing more');
});

t.test('a key revoked through the admin API closes its open subscriptions with 4401; nothing more is sent or charged', async (t) => {
  const admin = async (method: 'POST', path: string, body?: unknown): Promise<Record<string, unknown>> => {
    const res = await request(`${gw.origin}/admin/v1${path}`, { method, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    return (await res.body.json()) as Record<string, unknown>;
  };
  const { apiKey } = (await admin('POST', '/keys', { plan: 'metered', id: 'revoked-solana' })) as { apiKey: string };
  const client = await connect(apiKey);
  const id = await subscribe(client, 'slotSubscribe', []);
  node.node.advance();
  await until('a slot arrives', () => notificationsOf(client, id).length === 1);
  await admin('POST', '/keys/revoked-solana/revoke');
  t.equal(await client.closed, 4401, 'closed with 4401');
  node.node.advance();
  await until('its subscription is released', () => service.held('revoked-solana') === 0);
  t.equal(notificationsOf(client, id).length, 1, 'nothing after the revocation');
  t.equal((await ledger.balance('revoked-solana', 1_000_000_000, new Date())).used, 5 + 1, 'the subscribe and the one slot it was sent');
});
