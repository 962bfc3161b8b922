import t from 'tap';
import { readFileSync } from 'node:fs';
import { WebSocket } from 'ws';
import { Tokens } from '../core/plugin-api.js';
import { type CreditLedger, type KeyStore } from '../core/store-api.js';
import { type TollgatePlugin } from '../core/index.js';
import { httpTransport } from '../plugins/http/index.js';
import { wsTransport } from '../plugins/ws/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { devnet } from '@tollgate/devnet';
import { startTestGateway } from './helpers/gateway.js';
import { openWs, refusedWs } from './helpers/ws-client.js';
import { post, rpc } from './helpers/json-rpc.js';
import { steady, until } from './helpers/until.js';

const KEY = 'ws-test-key-00000001';
const HTTP_KEY = 'ws-test-http-key-001';
const WS_KEY = 'ws-test-ws-key-00001';
const POOR = 'ws-test-poor-key-001';
const RETIRED = 'ws-test-retired-plan';
const dev = devnet();
/** Keys as configured, plus one whose plan the gateway no longer serves (as a key store may still hold). */
const retiredPlanKey: TollgatePlugin = {
  name: 'retired-plan-key',
  register(container) {
    const configured = container.resolve<KeyStore>(Tokens.KeyStore);
    container.register(Tokens.KeyStore, { useValue: { find: (key: string) => (key === RETIRED ? { id: 'retired', plan: 'retired' } : configured.find(key)) } satisfies KeyStore });
  },
};
const MAX_IN_FLIGHT = 4;
const MAX_BUFFERED_BYTES = 256 * 1024;

/** The largest size the kernel lets a TCP socket buffer grow to (`net.ipv4.tcp_rmem` / `tcp_wmem`, third field). */
function maxSocketBuffer(name: 'tcp_rmem' | 'tcp_wmem'): number {
  return Number(readFileSync(`/proc/sys/net/ipv4/${name}`, 'utf8').trim().split(/\s+/)[2]);
}

const gw = await startTestGateway(
  {
    server: { maxBodyBytes: 64 * 1024 },
    plans: {
      big: { dailyCredits: 1e9, creditsPerSecond: 1e9, failover: false },
      poor: { dailyCredits: 2 * 80, creditsPerSecond: 1e9, failover: false },
    },
    keys: [
      { key: KEY, id: 'ws', plan: 'big' },
      { key: HTTP_KEY, id: 'via-http', plan: 'big' },
      { key: WS_KEY, id: 'via-ws', plan: 'big' },
      { key: POOR, id: 'poor', plan: 'poor' },
    ],
    networks: [{ name: 'eth', families: ['evm'], upstreams: [{ embedded: 'anvil#ws' }], options: { bulkLogs: 5_000 } }],
  },
  [retiredPlanKey, httpTransport(), wsTransport({ maxInFlight: MAX_IN_FLIGHT, maxBufferedBytes: MAX_BUFFERED_BYTES }), evmFamily(), dev],
);
t.teardown(() => gw.close());
const wsUrl = (key: string): string => `${gw.origin.replace('http', 'ws')}/eth/ws/v3/${key}`;
const ledger = gw.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);
const used = async (id: string): Promise<number> => (await ledger.balance(id, 1e9, new Date())).used;

t.test('a bad or missing key is refused with HTTP 401 before the upgrade', async (t) => {
  const bad = await refusedWs(wsUrl('no-such-key-0001'));
  t.equal(bad.status, 401);
  t.equal(JSON.parse(bad.body).error.code, -33001);
  t.equal((await refusedWs(`${gw.origin.replace('http', 'ws')}/eth/ws/v3/`)).status, 401);
  t.equal((await refusedWs(`${gw.origin.replace('http', 'ws')}/nowhere/ws/v3/${KEY}`)).status, 404);
});

t.test('a key on a plan the gateway does not serve is refused at the upgrade, as over HTTP', async (t) => {
  const overHttp = await post(`${gw.origin}/eth/v3/${RETIRED}`, rpc('eth_chainId', [], 1));
  t.equal(overHttp.status, 401);
  const refused = await refusedWs(wsUrl(RETIRED));
  t.equal(refused.status, 401, 'no WebSocket for a key the pipeline would refuse');
  t.equal(JSON.parse(refused.body).error.code, -33001);
});

t.test('concurrent calls on one connection are all answered, matched by id', async (t) => {
  const client = await openWs(wsUrl(KEY));
  t.teardown(() => client.close());
  for (let i = 0; i < 40; i++) client.send(rpc(i % 2 === 0 ? 'eth_chainId' : 'eth_blockNumber', [], i));
  const answers = (await client.waitFor(40)) as Array<{ id: number; result: string }>;
  t.same(answers.map((a) => a.id).sort((a, b) => a - b), Array.from({ length: 40 }, (_, i) => i));
  for (const a of answers) t.match(a.result, a.id % 2 === 0 ? /^0x7a69$/ : /^0x[0-9a-f]+$/);
});

t.test('a batch over WebSocket is answered as one array in request order', async (t) => {
  const client = await openWs(wsUrl(KEY));
  t.teardown(() => client.close());
  client.send([rpc('eth_chainId', [], 'a'), rpc('eth_nope', [], 'b'), rpc('eth_getBlockByNumber', ['0x1', false], 'c')]);
  const [batch] = (await client.waitFor(1)) as Array<Array<{ id: string; result?: unknown; error?: { code: number } }>>;
  t.same(batch!.map((i) => i.id), ['a', 'b', 'c']);
  t.equal(batch![1]!.error!.code, -32601);
  t.equal((batch![2]!.result as { number: string }).number, '0x1');
});

t.test('answers and notifications travel in text frames, whatever frame the call came in', async (t) => {
  const socket = new WebSocket(wsUrl(KEY), { perMessageDeflate: false });
  t.teardown(() => socket.terminate());
  const frames: Array<{ binary: boolean; message: { id?: unknown; method?: string } }> = [];
  socket.on('message', (data, isBinary) => frames.push({ binary: isBinary, message: JSON.parse(String(data)) as { id?: unknown; method?: string } }));
  await new Promise((resolve, reject) => { socket.once('open', resolve); socket.once('error', reject); });
  socket.send(JSON.stringify(rpc('eth_chainId', [], 'text')));
  socket.send(Buffer.from(JSON.stringify(rpc('eth_chainId', [], 'binary'))), { binary: true });
  socket.send(JSON.stringify([rpc('eth_chainId', [], 'batch')]));
  socket.send(JSON.stringify(rpc('eth_subscribe', ['newHeads'], 'sub')));
  await until('the subscription is answered', () => frames.some((f) => f.message.id === 'sub'));
  await dev.instance('anvil#ws')!.anvil.rpc('anvil_mine', ['0x1']);
  await until('a notification came', () => frames.some((f) => f.message.method === 'eth_subscription'));
  t.same(frames.filter((f) => f.binary), [], 'no frame was binary');
  t.ok(frames.length >= 5, 'three answers, the subscription id and a notification');
});

t.test('a malformed message gets -32700 and the connection stays open', async (t) => {
  const client = await openWs(wsUrl(KEY));
  t.teardown(() => client.close());
  client.send('{"jsonrpc":"2.0",');
  client.send(rpc('eth_chainId', [], 9));
  const [parse, ok] = (await client.waitFor(2)) as Array<{ id: unknown; error?: { code: number }; result?: string }>;
  t.same(parse, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
  t.same(ok, { jsonrpc: '2.0', id: 9, result: '0x7a69' });
});

t.test('an oversized message closes the connection with 1009', async (t) => {
  const client = await openWs(wsUrl(KEY));
  client.send(JSON.stringify({ ...rpc('eth_chainId', []), pad: 'x'.repeat(70 * 1024) }));
  t.equal(await client.closed, 1009);
});

t.test('credits over WebSocket equal credits over HTTP for the same calls', async (t) => {
  const calls = [rpc('eth_getBlockByNumber', ['latest', false], 1), rpc('eth_getLogs', [{ fromBlock: '0x0', toBlock: '0x3' }], 2), rpc('eth_chainId', [], 3), rpc('eth_bad', [], 4)];
  for (const call of calls) await post(gw.url('eth', HTTP_KEY), call);
  const client = await openWs(wsUrl(WS_KEY));
  t.teardown(() => client.close());
  for (const call of calls) client.send(call);
  await client.waitFor(calls.length);
  t.equal(await used('via-ws'), await used('via-http'));
  t.equal(await used('via-http'), 80 + 255 + gw.gateway.networks.get('eth')!.methods.get('eth_chainId')!.definition.credits);
});

t.test('an exhausted balance answers the quota error, then closes the connection with 4402', async (t) => {
  const client = await openWs(wsUrl(POOR));
  for (let i = 1; i <= 3; i++) {
    client.send(rpc('eth_getBlockByNumber', ['latest', false], i));
    await client.waitFor(i);
  }
  const last = client.messages[2] as { id: number; error: { code: number } };
  t.equal(last.id, 3);
  t.equal(last.error.code, -33000);
  t.equal(await client.closed, 4402);
});

t.test('a slow reader is not buffered without bound: reading pauses until it catches up', async (t) => {
  const seed = dev.getSeed('anvil#ws');
  const bulk = seed.bulkLogs!;
  const heavy = (id: number) => rpc('eth_getLogs', [{ fromBlock: `0x${bulk.fromBlock.toString(16)}`, toBlock: `0x${bulk.toBlock.toString(16)}` }], id);
  // Between the gateway and a client that reads nothing sit the kernel's socket buffers, which grow up to
  // tcp_rmem's and tcp_wmem's maxima: answers that fit there leave the gateway before anything can tell the
  // client is slow. Past them the gateway's own bound holds: `maxBufferedBytes` waiting, `maxInFlight` running.
  // So the calls taken can never exceed `bound`; a gateway that kept reading would take all `total`.
  const answerBytes = Buffer.byteLength((await post(gw.url('eth', KEY), heavy(0))).text);
  const kernelBytes = maxSocketBuffer('tcp_rmem') + maxSocketBuffer('tcp_wmem');
  const bound = Math.ceil((kernelBytes + MAX_BUFFERED_BYTES) / answerBytes) + MAX_IN_FLIGHT + 1;
  const total = 2 * bound;
  const client = await openWs(wsUrl(KEY));
  t.teardown(() => client.close());
  const before = await used('ws');
  const taken = async (): Promise<number> => ((await used('ws')) - before) / 255;
  (client.socket as unknown as { _socket: { pause(): void; resume(): void } })._socket.pause();
  for (let i = 0; i < total; i++) client.send(heavy(i));
  // The gateway has stopped taking calls once the count holds still while the client keeps not reading.
  const served = await steady('the calls taken', taken, 1_000);
  t.ok(served > 0, `the gateway took calls before the buffers filled (${served})`);
  t.ok(served <= bound, `while the client reads nothing, the gateway stops taking its calls (${served} taken, bound ${bound}, of ${total} sent)`);
  (client.socket as unknown as { _socket: { resume(): void } })._socket.resume();
  const answers = (await client.waitFor(total, 120_000)) as Array<{ result: unknown[] }>;
  t.equal(answers.length, total, 'every call is answered once the client reads again');
  t.equal(answers[0]!.result.length, bulk.count);
  t.equal(await taken(), total, 'and each was charged once');
});

t.test('a peer that stops answering pings is dropped', async (t) => {
  const local = await startTestGateway(
    { keys: [{ key: KEY, plan: 'growth' }], networks: [{ name: 'eth', families: ['evm'], upstreams: [{ embedded: 'anvil#ws' }] }] },
    [httpTransport(), wsTransport({ pingIntervalMs: 200 }), evmFamily(), dev],
  );
  t.teardown(() => local.close());
  const url = `${local.origin.replace('http', 'ws')}/eth/ws/v3/${KEY}`;
  const live = await openWs(url);
  t.teardown(() => live.close());
  const dead = await openWs(url, { autoPong: false });
  const started = Date.now();
  t.equal(await dead.closed, 1006, 'terminated without a closing handshake');
  t.ok(Date.now() - started < 5_000);
  live.send(rpc('eth_chainId', [], 1));
  t.same(await live.waitFor(1), [{ jsonrpc: '2.0', id: 1, result: '0x7a69' }], 'a peer that answers pings stays connected');
});

t.test('shutdown answers calls in flight, then closes with 1001', async (t) => {
  const local = await startTestGateway(
    { keys: [{ key: KEY, id: 'ws', plan: 'growth' }], networks: [{ name: 'eth', families: ['evm'], upstreams: [{ embedded: 'anvil#ws' }] }] },
    [httpTransport(), wsTransport(), evmFamily(), dev],
  );
  const client = await openWs(`${local.origin.replace('http', 'ws')}/eth/ws/v3/${KEY}`);
  const localLedger = local.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);
  client.send(rpc('eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest' }], 1));
  // Debited before dispatch: the call is in flight.
  await until('the call is in flight', async () => (await localLedger.balance('ws', 1e9, new Date())).used > 0);
  const closing = local.close();
  t.equal(await client.closed, 1001);
  await closing;
  t.equal(client.messages.length, 1, 'the call in flight was answered first');
});
