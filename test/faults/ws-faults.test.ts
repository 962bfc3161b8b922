/**
 * WebSocket faults: a client that never reads, a balance that runs out with many calls in flight, a
 * client that vanishes mid-call, an oversized message and too many connections for one key. Each checks
 * that what was charged is what reached the client, and prints the figures.
 */
import t, { type Test } from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { Tokens } from '../../core/plugin-api.js';
import { utcDay, type CreditLedger, type UsageRecorder } from '../../core/store-api.js';
import { type GatewayConfigInput } from '../../core/index.js';
import { httpTransport } from '../../plugins/http/index.js';
import { evmFamily } from '../../plugins/evm/index.js';
import { wsTransport } from '../../plugins/ws/index.js';
import { openSqliteStore } from '../../plugins/ledger-sqlite/index.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { startGatewayProcess } from '../helpers/gateway-process.js';
import { rpc } from '../helpers/json-rpc.js';
import { openWs, refusedWs } from '../helpers/ws-client.js';
import { report, rssMiB, until } from './helpers.js';
import { startTinyUpstream } from '../helpers/tiny-upstream.js';

const COST = 80; // eth_blockNumber
const CAP = 64;
const dir = mkdtempSync(join(tmpdir(), 'tollgate-ws-faults-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

function wsUrl(gw: { origin: string }, key: string): string {
  return `${gw.origin.replace('http', 'ws')}/eth/ws/v3/${key}`;
}

async function inProcess(t: Test, config: Omit<GatewayConfigInput, 'networks'>, upstreamUrl: string, ws = {}): Promise<TestGateway> {
  const gw = await startTestGateway({ ...config, networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: upstreamUrl, connections: 256 }] }] }, [httpTransport(), wsTransport(ws), evmFamily()]);
  t.teardown(() => gw.close());
  return gw;
}

async function books(gw: TestGateway, keyId: string): Promise<{ charged: number; usageCalls: number }> {
  const now = new Date();
  const ledger = gw.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);
  const usage = gw.gateway.container.resolve<UsageRecorder>(Tokens.UsageRecorder);
  const used = (await ledger.balance(keyId, 1e12, now)).used;
  const totals = await usage.usage!(keyId, utcDay(now));
  return { charged: used / COST, usageCalls: totals.eth_blockNumber?.calls ?? 0 };
}

t.test('a client that sends without reading: upstream calls stay under the cap, memory stays bounded, every call is charged once delivered', async (t) => {
  const upstream = await startTinyUpstream({ delayMs: 10, padBytes: 16 * 1024 });
  t.teardown(() => upstream.close());
  const path = join(dir, 'never-reads.db');
  const gw = await startGatewayProcess({
    store: 'sqlite',
    ws: { maxInFlight: CAP },
    config: {
      plans: { big: { dailyCredits: 1e12, creditsPerSecond: 1e12, failover: false } },
      keys: [{ key: 'ws-never-reads-key-01', id: 'reader', plan: 'big' }],
      networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url, connections: 1024 }] }],
      plugins: { 'ledger-sqlite': { path } },
    },
  });
  t.teardown(() => gw.kill());
  const pid = gw.child.pid!;
  const client = await openWs(wsUrl(gw, 'ws-never-reads-key-01'));
  t.teardown(() => client.socket.terminate());
  // Warm the gateway up so its baseline includes the code paths the load uses.
  client.send(rpc('eth_blockNumber', [], 'warm-up'));
  await client.waitFor(1);
  const baseline = rssMiB(pid);

  const raw = (client.socket as unknown as { _socket: { pause(): void; resume(): void } })._socket;
  raw.pause();
  const TOTAL = 8000; // 8000 answers of 16 KiB: 125 MiB if the gateway buffered them
  for (let i = 0; i < TOTAL; i++) client.send(rpc('eth_blockNumber', [], i));
  let peakRss = baseline;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssMiB(pid))), 20);
  t.teardown(() => clearInterval(sampler));
  // The gateway serves until the answers the client does not read fill its buffers, then stops taking calls.
  await until(() => ({ answered: upstream.answered(), holding: upstream.current() }), (s) => s.answered >= 300 && s.holding === 0, 'the gateway to stop taking calls from a client that reads nothing');
  const servedWhileNotReading = upstream.answered();
  peakRss = Math.max(peakRss, rssMiB(pid));
  const peakWhileNotReading = peakRss;
  raw.resume();
  await client.waitFor(TOTAL + 1, 120_000);
  clearInterval(sampler);
  const peakInFlight = upstream.peak();
  client.socket.close();
  t.equal(await gw.stop(), 0);

  const store = openSqliteStore({ path });
  t.teardown(() => store.close());
  const charged = store.ledger.balance('reader', 1e12, new Date()).used / COST;
  const usageCalls = store.usage.usage('reader', utcDay(new Date())).eth_blockNumber?.calls ?? 0;
  const delivered = client.messages.filter((m) => (m as { result?: string }).result !== undefined).length;
  report('ws client that never reads', { charged, delivered, usageCalls, peakUpstreamInFlight: peakInFlight, cap: CAP, rssBaselineMiB: baseline.toFixed(1), rssPeakNotReadingMiB: peakWhileNotReading.toFixed(1), rssPeakMiB: peakRss.toFixed(1), servedWhileNotReading });
  t.ok(peakInFlight <= CAP, `upstream calls in flight for the connection peaked at ${peakInFlight} (cap ${CAP})`);
  t.ok(servedWhileNotReading < TOTAL, `the gateway stopped taking calls from the client that read nothing (${servedWhileNotReading} of ${TOTAL} served)`);
  t.ok(peakWhileNotReading - baseline <= 64, `gateway RSS grew by ${(peakWhileNotReading - baseline).toFixed(1)} MiB while the client read nothing (at most 64)`);
  t.equal(delivered, TOTAL + 1, 'every call was answered once the client read');
  t.equal(charged, delivered, 'credits charged = answers delivered');
  t.equal(usageCalls, TOTAL + 1, 'usage = calls made');
});

t.test('a balance that runs out with many calls in flight: the charged calls are answered before the 4402 close', async (t) => {
  const upstream = await startTinyUpstream({ delayMs: 30 });
  t.teardown(() => upstream.close());
  const BALANCE = 100;
  const gw = await inProcess(t, { plans: { small: { dailyCredits: BALANCE * COST, creditsPerSecond: 1e12, failover: false } }, keys: [{ key: 'ws-quota-key-000001', id: 'quota', plan: 'small' }] }, upstream.url, { maxInFlight: CAP });
  const client = await openWs(wsUrl(gw, 'ws-quota-key-000001'));
  const SENT = 500;
  for (let i = 0; i < SENT; i++) client.send(rpc('eth_blockNumber', [], i));
  const code = await client.closed;
  const answers = client.messages as Array<{ result?: string; error?: { code: number } }>;
  const delivered = answers.filter((m) => m.result !== undefined).length;
  const refused = answers.filter((m) => m.error?.code === -33000).length;
  const { charged, usageCalls } = await books(gw, 'quota');
  report('ws quota exhausted with calls in flight', { sent: SENT, delivered, refusedForBalance: refused, charged, usageCalls, closeCode: code });
  t.equal(code, 4402, 'closed with 4402');
  t.equal(delivered, BALANCE, 'exactly the balance was served');
  t.equal(charged, delivered, 'credits charged = answers delivered');
  t.ok(refused >= 1, 'the client was told why');
  t.equal(usageCalls, answers.length, 'usage = calls made (each answered)');
});

t.test('a client that disconnects with calls in flight is charged nothing for them', async (t) => {
  const upstream = await startTinyUpstream({ delayMs: 400 });
  t.teardown(() => upstream.close());
  const gw = await inProcess(t, { plans: { big: { dailyCredits: 1e12, creditsPerSecond: 1e12, failover: false } }, keys: [{ key: 'ws-vanish-key-00001', id: 'vanish', plan: 'big' }] }, upstream.url);
  const client = await openWs(wsUrl(gw, 'ws-vanish-key-00001'));
  const SENT = 20;
  for (let i = 0; i < SENT; i++) client.send(rpc('eth_blockNumber', [], i));
  await until(() => upstream.current(), (n) => n === SENT, 'every call to reach the node');
  client.socket.terminate();
  await until(() => books(gw, 'vanish'), (b) => b.usageCalls === SENT, 'every call to finish');
  const { charged, usageCalls } = await books(gw, 'vanish');
  report('ws client gone mid-call', { sent: SENT, delivered: client.messages.length, charged, usageCalls });
  t.equal(client.messages.length, 0, 'nothing was delivered');
  t.equal(charged, 0, 'nothing was charged');
  t.equal(usageCalls, SENT, 'usage = calls made');
});

t.test('an answer that cannot be written (the socket is closing) is refunded, and usage agrees with the ledger', async (t) => {
  const upstream = await startTinyUpstream({ delayMs: 300 });
  t.teardown(() => upstream.close());
  const gw = await inProcess(t, { plans: { big: { dailyCredits: 1e12, creditsPerSecond: 1e12, failover: false } }, keys: [{ key: 'ws-closing-key-00001', id: 'closing', plan: 'big' }] }, upstream.url);
  const client = await openWs(wsUrl(gw, 'ws-closing-key-00001'));
  t.teardown(() => client.socket.terminate());
  client.send(rpc('eth_blockNumber', [], 1));
  await until(() => upstream.current(), (n) => n === 1, 'the call to reach the node');
  // The client starts the closing handshake and then reads nothing: the gateway's socket stays in
  // CLOSING (no close event, the call is not cancelled) while the node's answer comes back.
  client.socket.close();
  (client.socket as unknown as { _socket: { pause(): void } })._socket.pause();
  await until(() => upstream.answered(), (n) => n === 1, 'the node to answer');
  const usage = gw.gateway.container.resolve<UsageRecorder>(Tokens.UsageRecorder);
  const ledger = gw.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);
  const books = async (): Promise<{ charged: number; calls: number; credits: number }> => {
    const totals = (await usage.usage!('closing', utcDay(new Date()))).eth_blockNumber;
    return { charged: (await ledger.balance('closing', 1e12, new Date())).used, calls: totals?.calls ?? 0, credits: totals?.credits ?? 0 };
  };
  const settled = await until(books, (b) => b.calls === 1 && b.charged === 0, 'the undelivered answer to be refunded');
  report('ws answer not writable', { delivered: client.messages.length, ...settled });
  t.equal(client.messages.length, 0, 'nothing was delivered');
  t.equal(settled.charged, 0, 'the ledger gave the credits back');
  t.equal(settled.credits, 0, 'usage counts no credits for the call either');
  t.equal(settled.calls, 1, 'usage = calls made');
});

t.test('a 20 MiB message to a gateway process closes with 1009, not a reset, while the client is still writing', async (t) => {
  const upstream = await startTinyUpstream({ delayMs: 0 });
  t.teardown(() => upstream.close());
  const gw = await startGatewayProcess({
    store: 'memory',
    ws: {},
    config: { keys: [{ key: 'ws-big-message-key01', plan: 'growth' }], networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url }] }] },
  });
  t.teardown(() => gw.kill());
  const codes: number[] = [];
  for (let i = 0; i < 5; i++) {
    const client = await openWs(wsUrl(gw, 'ws-big-message-key01'));
    client.socket.on('error', () => { /* a reset shows as close code 1006 */ });
    client.send(JSON.stringify({ ...rpc('eth_blockNumber', []), pad: 'x'.repeat(20 * 1024 * 1024) }));
    codes.push(await client.closed);
  }
  report('ws 20 MiB messages', { closeCodes: codes.join('/') });
  t.same(codes, [1009, 1009, 1009, 1009, 1009], 'every connection closed with 1009');
});

t.test('a key gets at most maxConnectionsPerKey connections at once; closing one frees its place', async (t) => {
  const upstream = await startTinyUpstream({ delayMs: 0 });
  t.teardown(() => upstream.close());
  const gw = await inProcess(t, { keys: [{ key: 'ws-conn-cap-key-0001', plan: 'growth' }, { key: 'ws-conn-cap-key-0002', plan: 'growth' }] }, upstream.url, { maxConnectionsPerKey: 3 });
  const open = await Promise.all(Array.from({ length: 3 }, () => openWs(wsUrl(gw, 'ws-conn-cap-key-0001'))));
  t.teardown(() => open.forEach((c) => c.socket.terminate()));
  const refused = await refusedWs(wsUrl(gw, 'ws-conn-cap-key-0001'));
  t.equal(refused.status, 429, 'a fourth connection is refused with 429');
  t.match(JSON.parse(refused.body), { error: { code: -33200, data: { maxConnections: 3 } } });
  const other = await openWs(wsUrl(gw, 'ws-conn-cap-key-0002'));
  t.teardown(() => other.socket.terminate());
  t.equal(other.socket.readyState, WebSocket.OPEN, 'another key is not affected');
  open[0]!.socket.close();
  await open[0]!.closed;
  const again = await until(async () => {
    const socket = new WebSocket(wsUrl(gw, 'ws-conn-cap-key-0001'));
    return new Promise<WebSocket | undefined>((resolve) => {
      socket.once('open', () => resolve(socket));
      socket.once('unexpected-response', (req) => { req.destroy(); resolve(undefined); });
    });
  }, (s) => s !== undefined, 'a place to free up');
  t.teardown(() => again!.terminate());
  t.equal(again!.readyState, WebSocket.OPEN, 'a connection is accepted again once one closed');
});
