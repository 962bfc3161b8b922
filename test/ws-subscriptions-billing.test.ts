import t, { type Test } from 'tap';
import type { Socket } from 'node:net';
import { SEED_CONTRACT, startAnvil } from '@tollgate/devnet';
import { encodeFunctionData, type Abi, type Hex } from 'viem';
import { Tokens, keyIdOf } from '../core/plugin-api.js';
import { type CreditLedger } from '../core/store-api.js';
import { evmFamily } from '../plugins/evm/index.js';
import { ledgerRedis } from '../plugins/ledger-redis/index.js';
import { wsTransport, type WsTransport } from '../plugins/ws/index.js';
import { startTestGateway } from './helpers/gateway.js';
import { openWs, type RawWsClient } from './helpers/ws-client.js';
import { redisAvailable, startRedisServer } from './helpers/redis-server.js';
import { until } from './helpers/until.js';

// Notifications are charged exactly: a charge stands only for notifications an open socket took, on the
// Redis ledger (every debit a round trip), with a real Anvil emitting bursts of logs.
if (!(await redisAvailable())) {
  t.fail('redis-server is not installed (apt-get install redis-server); these tests need it');
  process.exit(1);
}
const SUBSCRIBE = 5;
const HEAD = 50;
const LOG = 300;
const redis = await startRedisServer();
t.teardown(() => redis.stop());
const anvil = await startAnvil({ noMining: true, args: ['--gas-limit', '100000000'] });
t.teardown(() => anvil.stop());
const gw = await startTestGateway({
  plans: { metered: { dailyCredits: 1_000_000_000, creditsPerSecond: 1_000_000, failover: false } },
  keys: Array.from({ length: 8 }, (_, i) => ({ key: `billing-key-${String(i).padStart(9, '0')}`, plan: 'metered' })),
  networks: [{ name: 'eth', families: ['evm'], upstreams: [{ name: 'anvil', url: anvil.url, wsUrl: anvil.wsUrl }] }],
}, [ledgerRedis({ url: redis.url, prefix: 'ws-billing:', commandTimeoutMs: 10_000 }), wsTransport({ pingIntervalMs: 600_000, subscriptions: { closeTimeoutMs: 60_000 } }), evmFamily()]);
t.teardown(() => gw.close());
const ledger = gw.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);
const transport = gw.gateway.container.resolveAll(Tokens.Transport).find((x) => x.name === 'ws') as WsTransport;
/** The gateway side of each client connection, to see when the gateway has answered a close. */
const accepted: Socket[] = [];
gw.server.on('connection', (socket: Socket) => accepted.push(socket));

const account = ((await anvil.rpc('eth_accounts')) as string[])[0]!;
await anvil.rpc('eth_sendTransaction', [{ from: account, data: SEED_CONTRACT.bytecode, gas: '0x400000' }]);
await anvil.rpc('evm_mine');
const block = (await anvil.rpc('eth_getBlockByNumber', ['latest', false])) as { transactions: string[] };
const address = ((await anvil.rpc('eth_getTransactionReceipt', [block.transactions[0]])) as { contractAddress: string }).contractAddress;

/** Mines one block holding a transaction that emits `count` logs. */
async function mineLogs(count: number): Promise<void> {
  const data = encodeFunctionData({ abi: SEED_CONTRACT.abi as unknown as Abi, functionName: 'ping', args: [BigInt(count), `0x${'ab'.repeat(32)}` as Hex] });
  await anvil.rpc('eth_sendTransaction', [{ from: account, to: address, data, gas: `0x${(60_000 + count * 4_000).toString(16)}` }]);
  await anvil.rpc('evm_mine');
}

let keys = 0;
/** A new key (its own balance) and a connection for it. */
async function connect(t: Test): Promise<{ client: RawWsClient; key: string; raw: Socket }> {
  const key = `billing-key-${String(keys++).padStart(9, '0')}`;
  const client = await openWs(`${gw.origin.replace('http', 'ws')}/eth/ws/v3/${key}`);
  t.teardown(() => client.socket.terminate());
  return { client, key, raw: accepted.at(-1)! };
}

type Message = { id?: number; result?: unknown; params?: { subscription: string } };
async function subscribe(client: RawWsClient, params: unknown[]): Promise<string> {
  const id = Math.floor(Math.random() * 1e9);
  client.send({ jsonrpc: '2.0', id, method: 'eth_subscribe', params });
  for (;;) {
    const answer = (client.messages as Message[]).find((m) => m.id === id);
    if (answer !== undefined) return answer.result as string;
    await client.waitFor(client.messages.length + 1);
  }
}
const received = (client: RawWsClient, id: string): number => (client.messages as Message[]).filter((m) => m.params?.subscription === id).length;
const used = async (key: string): Promise<number> => (await ledger.balance(keyIdOf(key), 1_000_000_000, new Date())).used;

/** Waits until the key's balance holds what the client received (refunds reach Redis a moment later), then checks it does. */
async function chargedEqualsDelivered(t: Test, key: string, expected: number): Promise<void> {
  await until('refunds are written', async () => (await used(key)) === expected, 10_000).catch(() => {});
  t.equal(await used(key), expected, 'credits charged = credits of the notifications that reached the client');
}

t.test('a client that sends a close frame and stops reading while blocks are mined pays only for what it got', async (t) => {
  const { client, key, raw } = await connect(t);
  const heads = await subscribe(client, ['newHeads']);
  await anvil.rpc('evm_mine');
  await client.waitFor(2);
  client.socket.close(1000);
  client.socket.pause();
  // The gateway read the close frame and answered it (its half of the connection is ended); the client reads nothing.
  await until('the gateway answered the close', () => raw.writableEnded);
  const [hub] = transport.subscriptions.hubs();
  // Each head is handed to the connection (or the stream closes, its one subscriber gone).
  for (let i = 1; i <= 5; i++) {
    const before = hub!.delivered;
    await anvil.rpc('evm_mine');
    await until('the head reached the stream', () => hub!.delivered > before || transport.subscriptions.streams === 0);
  }
  client.socket.resume();
  await client.closed;
  await until('the gateway let the connection go', () => transport.connections === 0);
  t.equal(received(client, heads), 1, 'the head before the close arrived, none after it');
  await chargedEqualsDelivered(t, key, SUBSCRIBE + HEAD * received(client, heads));
});

t.test('a close frame in the middle of a burst of logs: charged = delivered', async (t) => {
  const { client, key } = await connect(t);
  const logs = await subscribe(client, ['logs', { address }]);
  const first = client.waitFor(2);
  const mined = (async () => { for (let i = 0; i < 3; i++) await mineLogs(1_000); })();
  await first;
  client.socket.close(1000);
  await mined;
  await client.closed;
  await until('the gateway let the connection go', () => transport.connections === 0);
  t.ok(received(client, logs) < 3_000, `the client left before the end of the burst (got ${received(client, logs)})`);
  await chargedEqualsDelivered(t, key, SUBSCRIBE + LOG * received(client, logs));
});

t.test('a client that half-closes its connection in the middle of a burst: charged = delivered', async (t) => {
  const { client, key } = await connect(t);
  const logs = await subscribe(client, ['logs', { address }]);
  const first = client.waitFor(2);
  const mined = (async () => { for (let i = 0; i < 3; i++) await mineLogs(1_000); })();
  await first;
  // A FIN without a close frame: the client still reads what comes.
  (client.socket as unknown as { _socket: Socket })._socket.end();
  await mined;
  await client.closed;
  await until('the gateway let the connection go', () => transport.connections === 0);
  t.ok(received(client, logs) < 3_000, `the client left before the end of the burst (got ${received(client, logs)})`);
  await chargedEqualsDelivered(t, key, SUBSCRIBE + LOG * received(client, logs));
});

t.test('a prompt reader of logs through 10 blocks of 1,000 logs gets every log, and is never closed as slow', async (t) => {
  const { client, key } = await connect(t);
  const logs = await subscribe(client, ['logs', { address }]);
  let closedWith = 0;
  void client.closed.then((code) => { closedWith = code; });
  for (let i = 0; i < 10; i++) await mineLogs(1_000);
  await until('every log arrived (or the connection closed)', () => received(client, logs) === 10_000 || closedWith !== 0, 120_000).catch(() => {});
  t.equal(closedWith, 0, 'the connection stayed open');
  t.equal(received(client, logs), 10_000, 'all 10,000 logs arrived');
  const indices = (client.messages as Array<{ params?: { subscription: string; result: { blockNumber: string; logIndex: string } } }>)
    .filter((m) => m.params?.subscription === logs).map((m) => `${Number.parseInt(m.params!.result.blockNumber, 16)}:${Number.parseInt(m.params!.result.logIndex, 16)}`);
  t.equal(new Set(indices).size, 10_000, 'each log once');
  await chargedEqualsDelivered(t, key, SUBSCRIBE + LOG * 10_000);
});
