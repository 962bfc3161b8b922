import t, { type Test } from 'tap';
import { startAnvil, startBorServer, type AnvilInstance } from '@tollgate/devnet';
import { createPublicClient, webSocket, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { WebSocketProvider, Network } from 'ethers';
import { Tokens } from '../core/plugin-api.js';
import { type CreditLedger } from '../core/store-api.js';
import { evmFamily } from '../plugins/evm/index.js';
import { wsTransport, type WsTransport } from '../plugins/ws/index.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { openWs, type RawWsClient } from './helpers/ws-client.js';
import { startTcpRelay, type TcpRelay } from './helpers/tcp-relay.js';
import { until } from './helpers/failover-upstreams.js';

// Clients' calls over the gateway's WebSocket reach the node over the gateway's own upstream WebSockets.
// Every node sits behind a TCP relay that tells WebSocket connections from HTTP ones and keeps what went
// over HTTP as text, so a test sees which way a call went: the marker addresses below are in an HTTP
// body when a call went over HTTP, and never in the (masked) WebSocket frames of the gateway's sockets.

const KEY = 'ws-upstream-pool-key-01';
/** Anvil's first dev account's well-known key (its default mnemonic). */
const DEV_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';

let markers = 0;
/** An address no other call uses, so its presence in the HTTP text tells that this call went over HTTP. */
const marker = (): Hex => `0x${(0xa11ce000 + ++markers).toString(16).padStart(40, '0')}` as Hex;

interface Setup {
  readonly anvil: AnvilInstance;
  readonly relays: TcpRelay[];
  readonly gw: TestGateway;
  readonly transport: WsTransport;
  readonly wsUrl: string;
  /** Credits the key has used today. */
  used(): Promise<number>;
  /** Credits of one call of `method`. */
  credits(method: string): number;
  /** Opens a raw client and waits until the gateway's upstream sockets are open (calls before that go over HTTP, by design). */
  client(): Promise<RawWsClient>;
}

/** One Anvil behind `nodes` relays, each an upstream of one network with its HTTP and WebSocket URL. */
async function setup(t: Test, nodes = 1, upstreamConnections?: number, timeoutMs?: number): Promise<Setup> {
  const anvil = await startAnvil();
  t.teardown(() => anvil.stop());
  const relays = await Promise.all(Array.from({ length: nodes }, () => startTcpRelay(anvil.url)));
  t.teardown(() => Promise.all(relays.map((r) => r.close())));
  const gw = await startTestGateway({
    plans: { dev: { dailyCredits: 10_000_000, creditsPerSecond: 10_000_000, failover: false } },
    keys: [{ key: KEY, id: 'pool', plan: 'dev' }],
    networks: [{ name: 'eth', families: ['evm'], upstreams: relays.map((r, i) => ({ name: `node-${i}`, url: r.url, wsUrl: r.wsUrl, ...(timeoutMs === undefined ? {} : { timeoutMs }) })) }],
  }, // Pings far apart: a relay holding the node's bytes holds its pongs too, and a test's hold must not
  // look like a dead node.
  [wsTransport({ upstreamConnections, subscriptions: { upstreamPingMs: 30_000 } }), evmFamily()]);
  t.teardown(() => gw.close());
  const transport = gw.gateway.container.resolveAll(Tokens.Transport).find((x) => x.name === 'ws') as WsTransport;
  const ledger = gw.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);
  const wsUrl = `${gw.origin.replace('http', 'ws')}/eth/ws/v3/${KEY}`;
  const network = gw.gateway.networks.get('eth')!;
  const open = (): number => [...transport.upstreamSockets.sockets().values()].flat().filter((s) => s.open).length;
  return {
    anvil,
    relays,
    gw,
    transport,
    wsUrl,
    used: async () => (await ledger.balance('pool', 10_000_000, new Date())).used,
    credits: (method) => network.methods.get(method)!.definition.credits,
    async client() {
      const client = await openWs(wsUrl);
      t.teardown(() => client.close());
      // A node's first calls open the pool's sockets to it (and go over HTTP while they open); calls take
      // the nodes in turn, so a few calls open every node's.
      let id = 0;
      await until('the upstream sockets are open', async () => {
        client.send({ jsonrpc: '2.0', id: `warm-up-${++id}`, method: 'eth_chainId', params: [] });
        await client.waitFor(id);
        return open() >= nodes * (upstreamConnections ?? 2);
      }, 20_000, 50);
      client.messages.length = 0;
      return client;
    },
  };
}

/** The answer to `id` among a client's messages. */
const answerOf = (client: RawWsClient, id: unknown): { id: unknown; result?: unknown; error?: { code: number; message: string } } | undefined =>
  (client.messages as Array<{ id: unknown }>).find((m) => m.id === id);

t.test('raw ws: calls and batches go over the upstream WebSocket, each answered with its own id', async (t) => {
  const { anvil, relays, transport, client: open } = await setup(t);
  const client = await open();
  const [a, b, c, d] = [marker(), marker(), marker(), marker()];
  await anvil.rpc('anvil_setBalance', [a, '0x2a']);
  const sentBefore = transport.channel.sent;
  client.send({ jsonrpc: '2.0', id: 7, method: 'eth_getBalance', params: [a, 'latest'] });
  client.send({ jsonrpc: '2.0', id: 'seven', method: 'eth_getBalance', params: [b, 'latest'] });
  client.send({ jsonrpc: '2.0', id: null, method: 'eth_getBalance', params: [c, 'latest'] });
  client.send('{"jsonrpc":"2.0","id":1e0,"method":"eth_blockNumber","params":[]}');
  await client.waitFor(4);
  t.same(answerOf(client, 7), { jsonrpc: '2.0', id: 7, result: '0x2a' }, 'a number id comes back, with the node\'s answer');
  t.same(answerOf(client, 'seven'), { jsonrpc: '2.0', id: 'seven', result: '0x0' }, 'a string id comes back');
  t.same(answerOf(client, null), { jsonrpc: '2.0', id: null, result: '0x0' }, 'a null id comes back');
  t.ok(client.messages.some((m) => (m as { id: unknown }).id === 1 && typeof (m as { result?: unknown }).result === 'string'), 'the client\'s own bytes for its id (1e0) come back as the node reads them');
  client.messages.length = 0;
  client.send([
    { jsonrpc: '2.0', id: 'x', method: 'eth_getBalance', params: [d, 'latest'] },
    { jsonrpc: '2.0', id: 2, method: 'eth_getBalance', params: [a, 'latest'] },
    { jsonrpc: '2.0', id: 3, method: 'no_such_method', params: [] },
    { jsonrpc: '2.0', id: 4, method: 'eth_chainId', params: [] },
  ]);
  const [batch] = (await client.waitFor(1)) as Array<Array<{ id: unknown; result?: unknown; error?: { code: number } }>>;
  t.same(batch!.map((m) => m.id), ['x', 2, 3, 4], 'a batch is answered in order, each call with its id');
  t.same(batch!.map((m) => m.result), ['0x0', '0x2a', undefined, '0x7a69'], 'with each call\'s own answer');
  t.equal(batch![2]!.error?.code, -32601, 'an unknown method is the gateway\'s own error');
  client.messages.length = 0;
  client.send('{"jsonrpc":"2.0","id":5,');
  const [parseError] = (await client.waitFor(1)) as Array<{ id: unknown; error: { code: number } }>;
  t.same([parseError!.id, parseError!.error.code], [null, -32700], 'a message that is not JSON gets a parse error with id null');
  t.ok(transport.channel.sent - sentBefore >= 5, `the calls went over the upstream WebSocket (${transport.channel.sent - sentBefore} requests)`);
  for (const address of [a, b, c, d]) t.notOk(relays[0]!.httpText.includes(address.slice(2)), `no HTTP request carried ${address}`);
  t.ok(relays[0]!.wsOpened >= 2, 'the gateway opened its WebSockets to the node');
});

t.test('viem and ethers over the gateway\'s WebSocket: answered over the upstream WebSocket', async (t) => {
  const { anvil, relays, wsUrl, client: open } = await setup(t);
  await open();
  const [a, b, c] = [marker(), marker(), marker()];
  await anvil.rpc('anvil_setBalance', [a, '0x64']);
  await anvil.rpc('anvil_setBalance', [b, '0x65']);
  const viem = createPublicClient({ transport: webSocket(wsUrl, { retryCount: 0, reconnect: false, keepAlive: false }) });
  t.teardown(async () => (await viem.transport.getRpcClient()).socket.close());
  t.equal(await viem.getBalance({ address: a }), 100n, 'viem getBalance');
  t.equal(await viem.getBlockNumber({ cacheTime: 0 }), BigInt((await anvil.rpc('eth_blockNumber')) as string), 'viem getBlockNumber');
  const network = Network.from(31337);
  const ethers = new WebSocketProvider(wsUrl, network, { staticNetwork: network });
  t.teardown(() => ethers.destroy());
  // Asked in one tick, ethers sends them as one batch.
  const [balanceB, balanceC, chainId] = await Promise.all([ethers.getBalance(b), ethers.getBalance(c), ethers.send('eth_chainId', [])]);
  t.same([balanceB, balanceC, chainId], [101n, 0n, '0x7a69'], 'ethers getBalance (batched) and send');
  for (const address of [a, b, c]) t.notOk(relays[0]!.httpText.includes(address.slice(2)), `no HTTP request carried ${address}`);
});

t.test('the upstream WebSockets are down: calls go over HTTP, and come back to WebSockets once they reopen', async (t) => {
  const { anvil, relays, transport, client: open } = await setup(t);
  const client = await open();
  const relay = relays[0]!;
  relay.refuseWebSockets = true;
  relay.cutWebSockets();
  await until('the gateway saw its sockets close', () => [...transport.upstreamSockets.sockets().values()].flat().every((s) => !s.open));
  const down = marker();
  await anvil.rpc('anvil_setBalance', [down, '0x5']);
  client.send({ jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: [down, 'latest'] });
  await client.waitFor(1);
  t.same(answerOf(client, 1), { jsonrpc: '2.0', id: 1, result: '0x5' }, 'answered while no upstream WebSocket is open');
  t.ok(relay.httpText.includes(down.slice(2)), 'over HTTP: the relay saw the call in an HTTP body');
  relay.refuseWebSockets = false;
  // Reopening is on demand, after a backoff: calls keep being answered (over HTTP) meanwhile.
  let id = 100;
  await until('the sockets reopened', async () => {
    client.send({ jsonrpc: '2.0', id: ++id, method: 'eth_chainId', params: [] });
    await client.waitFor(client.messages.length + 1);
    return [...transport.upstreamSockets.sockets().values()].flat().some((s) => s.open);
  }, 20_000, 50);
  const back = marker();
  client.messages.length = 0;
  client.send({ jsonrpc: '2.0', id: 'back', method: 'eth_getBalance', params: [back, 'latest'] });
  await client.waitFor(1);
  t.same(answerOf(client, 'back'), { jsonrpc: '2.0', id: 'back', result: '0x0' });
  t.notOk(relay.httpText.includes(back.slice(2)), 'over the reopened WebSocket again');
});

t.test('the serving node\'s WebSockets are cut with calls in flight: they fail over, every answer right, credits exact', async (t) => {
  const { anvil, relays, transport, used, credits, client: open } = await setup(t, 2, 1);
  const client = await open();
  const before = await used();
  const [held, other] = relays as [TcpRelay, TcpRelay];
  held.hold();
  const addresses = Array.from({ length: 20 }, () => marker());
  for (const [i, address] of addresses.entries()) await anvil.rpc('anvil_setBalance', [address, `0x${(i + 1).toString(16)}`]);
  addresses.forEach((address, i) => client.send({ jsonrpc: '2.0', id: i, method: 'eth_getBalance', params: [address, 'latest'] }));
  await until('some calls wait on the held node', () => held.held > 0);
  const stuck = transport.upstreamSockets.sockets().get('node-0')!.reduce((n, s) => n + s.waiting, 0);
  t.ok(stuck > 0, `${stuck} calls wait on node-0's socket`);
  held.cutWebSockets();
  await client.waitFor(addresses.length);
  for (const [i] of addresses.entries()) t.same(answerOf(client, i), { jsonrpc: '2.0', id: i, result: `0x${(i + 1).toString(16)}` }, `call ${i}: its own answer`);
  t.equal(client.messages.length, addresses.length, 'one answer per call');
  t.equal(await used() - before, addresses.length * credits('eth_getBalance'), 'credits: each call charged once');
  held.release();
  t.ok(other.wsOpened >= 1, 'the other node had its own WebSocket');
});

t.test('a node that does not answer on its socket: the calls time out there and fail over', async (t) => {
  const { anvil, relays, transport, used, credits, client: open } = await setup(t, 2, 1, 3_000);
  const client = await open();
  const before = await used();
  relays[0]!.hold();
  const addresses = Array.from({ length: 6 }, () => marker());
  for (const [i, address] of addresses.entries()) await anvil.rpc('anvil_setBalance', [address, `0x${(i + 1).toString(16)}`]);
  addresses.forEach((address, i) => client.send({ jsonrpc: '2.0', id: i, method: 'eth_getBalance', params: [address, 'latest'] }));
  await client.waitFor(addresses.length);
  for (const [i] of addresses.entries()) t.same(answerOf(client, i), { jsonrpc: '2.0', id: i, result: `0x${(i + 1).toString(16)}` }, `call ${i}: its own answer`);
  t.equal(await used() - before, addresses.length * credits('eth_getBalance'), 'credits: each call charged once');
  t.equal(transport.upstreamSockets.sockets().get('node-0')!.reduce((n, s) => n + s.waiting, 0), 0, 'the timed-out calls left node-0\'s socket');
  relays[0]!.release();
});

t.test('a transaction whose node\'s socket is cut after it was sent is not sent again', async (t) => {
  const { anvil, relays, used, client: open } = await setup(t, 2, 1);
  const client = await open();
  const account = privateKeyToAccount(DEV_KEY);
  const nonce = Number.parseInt((await anvil.rpc('eth_getTransactionCount', [account.address, 'latest'])) as string, 16);
  const raw = await account.signTransaction({ chainId: 31337, nonce, to: marker(), value: 1n, gas: 21_000n, gasPrice: 2_000_000_000n, type: 'legacy' });
  const before = await used();
  for (const relay of relays) relay.hold();
  const sentBefore = relays.map((r) => r.wsBytesIn);
  client.send({ jsonrpc: '2.0', id: 'tx', method: 'eth_sendRawTransaction', params: [raw] });
  await until('the transaction left on one node\'s socket', () => relays.some((r, i) => r.wsBytesIn > sentBefore[i]!));
  const served = relays.find((r, i) => r.wsBytesIn > sentBefore[i]!)!;
  served.cutWebSockets();
  const [answer] = (await client.waitFor(1)) as Array<{ id: unknown; error?: { code: number; message: string } }>;
  for (const relay of relays) relay.release();
  t.equal(answer!.id, 'tx');
  t.equal(answer!.error?.code, -33503, 'the client is told the network failed');
  t.match(answer!.error?.message, /not sent twice/, 'and that the transaction was not sent again');
  t.equal(Number.parseInt((await anvil.rpc('eth_getTransactionCount', [account.address, 'latest'])) as string, 16), nonce + 1, 'the node got it once');
  t.equal(await used(), before, 'the failed call is not charged');
});

t.test('a client that leaves mid-call: its upstream call is dropped, its late answer discarded, the call refunded', async (t) => {
  const { relays, transport, used, client: open } = await setup(t);
  const client = await open();
  const before = await used();
  const relay = relays[0]!;
  relay.hold();
  client.send({ jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: [marker(), 'latest'] });
  const waiting = (): number => [...transport.upstreamSockets.sockets().values()].flat().reduce((n, s) => n + s.waiting, 0);
  await until('the call waits on the upstream socket', () => waiting() === 1 && relay.held > 0);
  client.socket.terminate();
  await until('the upstream call was dropped', () => waiting() === 0);
  t.ok([...transport.upstreamSockets.sockets().values()].flat().every((s) => s.open), 'dropped by the cancellation, the socket still open');
  relay.release();
  await until('the ledger settled', async () => (await used()) === before, 5_000);
  t.equal(await used(), before, 'refunded: nothing charged');
  // The late answer found no call and changed nothing: the socket still serves.
  const next = await open();
  next.send({ jsonrpc: '2.0', id: 2, method: 'eth_chainId', params: [] });
  await next.waitFor(1);
  t.same(answerOf(next, 2), { jsonrpc: '2.0', id: 2, result: '0x7a69' }, 'the socket still answers the next call');
  t.ok([...transport.upstreamSockets.sockets().values()].flat().every((s) => s.open), 'no socket was lost');
});

t.test('upstreamConnections: 0 keeps calls on HTTP; a bad value is refused by name', async (t) => {
  const { anvil, relays, gw } = await setup(t, 1, 0);
  const client = await openWs(`${gw.origin.replace('http', 'ws')}/eth/ws/v3/${KEY}`);
  t.teardown(() => client.close());
  const address = marker();
  await anvil.rpc('anvil_setBalance', [address, '0x9']);
  client.send({ jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: [address, 'latest'] });
  await client.waitFor(1);
  t.same(answerOf(client, 1), { jsonrpc: '2.0', id: 1, result: '0x9' });
  t.ok(relays[0]!.httpText.includes(address.slice(2)), 'over HTTP');
  t.equal(relays[0]!.wsOpened, 0, 'no upstream WebSocket opened');
  await t.rejects(startTestGateway({ keys: [], plugins: { ws: { upstreamConnections: -1 } }, networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: anvil.url }] }] }, [wsTransport(), evmFamily()]), /plugins\.ws\.upstreamConnections/);
});

t.test('the devnet\'s bor shim serves its WebSocket as its HTTP: bor_ calls itself, the rest relayed to the node', async (t) => {
  const anvil = await startAnvil({ chainId: 137 });
  t.teardown(() => anvil.stop());
  const bor = await startBorServer({ upstream: anvil.url, wsUpstream: anvil.wsUrl });
  t.teardown(() => bor.stop());
  const client = await openWs(bor.wsUrl!);
  t.teardown(() => client.close());
  client.send({ jsonrpc: '2.0', id: 1, method: 'bor_getCurrentValidators', params: [] });
  client.send({ jsonrpc: '2.0', id: 2, method: 'eth_chainId', params: [] });
  await client.waitFor(2);
  t.same((answerOf(client, 1)?.result as unknown[]).length, bor.validators.length, 'bor_getCurrentValidators answered by the shim');
  t.equal(answerOf(client, 2)?.result, '0x89', 'eth_chainId relayed to the node');
  client.messages.length = 0;
  client.send([{ jsonrpc: '2.0', id: 'a', method: 'eth_chainId', params: [] }, { jsonrpc: '2.0', id: 'b', method: 'bor_getCurrentValidators', params: [] }]);
  const [batch] = (await client.waitFor(1)) as Array<Array<{ id: unknown }>>;
  t.same(batch!.map((m) => m.id), ['a', 'b'], 'a mixed batch is answered in order');
});
