/**
 * HTTP clients that go away mid-call, and the gateway killed with -9 under HTTP and WebSocket load on
 * SQLite. Charged credits equal the calls whose result reached the client (after a crash, plus at most
 * the calls in flight at that moment: the documented crash window).
 */
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { Tokens } from '../../core/plugin-api.js';
import { utcDay, type CreditLedger, type UsageRecorder } from '../../core/store-api.js';
import { httpTransport } from '../../plugins/http/index.js';
import { evmFamily } from '../../plugins/evm/index.js';
import { openSqliteStore } from '../../plugins/ledger-sqlite/index.js';
import { startTestGateway } from '../helpers/gateway.js';
import { startGatewayProcess } from '../helpers/gateway-process.js';
import { rpc } from '../helpers/json-rpc.js';
import { openWs } from '../helpers/ws-client.js';
import { httpLoad, report, until } from './helpers.js';
import { startTinyUpstream } from '../helpers/tiny-upstream.js';

const COST = 80; // eth_blockNumber
const dir = mkdtempSync(join(tmpdir(), 'tollgate-client-faults-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

t.test('HTTP clients that disconnect before their answer are not charged; those that wait are', async (t) => {
  const upstream = await startTinyUpstream({ delayMs: 400 });
  t.teardown(() => upstream.close());
  const gw = await startTestGateway(
    {
      plans: { big: { dailyCredits: 1e12, creditsPerSecond: 1e12, failover: false } },
      keys: [{ key: 'http-vanish-key-00001', id: 'vanish', plan: 'big' }],
      networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url, connections: 64 }] }],
    },
    [httpTransport(), evmFamily()],
  );
  t.teardown(() => gw.close());
  const agent = new Agent({ connections: 64 });
  t.teardown(() => agent.close());
  const SENT = 20;
  const controllers = Array.from({ length: SENT }, () => new AbortController());
  const body = JSON.stringify(rpc('eth_blockNumber', []));
  const calls = controllers.map(async (controller) => {
    try {
      const res = await request(gw.url('eth', 'http-vanish-key-00001'), { method: 'POST', body, headers: { 'content-type': 'application/json' }, dispatcher: agent, signal: controller.signal });
      return (await res.body.text()).includes('"result"');
    } catch {
      return false;
    }
  });
  await until(() => upstream.current(), (n) => n === SENT, 'every call to reach the node');
  // Half the clients give up while the node is still working on their calls.
  for (const controller of controllers.slice(0, SENT / 2)) controller.abort();
  const delivered = (await Promise.all(calls)).filter(Boolean).length;
  const usage = gw.gateway.container.resolve<UsageRecorder>(Tokens.UsageRecorder);
  const ledger = gw.gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);
  const now = new Date();
  await until(async () => (await usage.usage!('vanish', utcDay(now))).eth_blockNumber?.calls ?? 0, (n) => n === SENT, 'every call to finish');
  const charged = (await ledger.balance('vanish', 1e12, now)).used / COST;
  report('http clients gone mid-call', { sent: SENT, abandoned: SENT / 2, delivered, charged });
  t.equal(delivered, SENT / 2, 'the clients that waited got their answers');
  t.equal(charged, delivered, 'credits charged = answers delivered');
});

t.test('gateway killed with -9 under HTTP and WebSocket load (SQLite): charged is delivered plus at most the calls in flight', async (t) => {
  const upstream = await startTinyUpstream({ delayMs: 2 });
  t.teardown(() => upstream.close());
  const path = join(dir, 'crash.db');
  const HTTP_WORKERS = 8;
  const WS_IN_FLIGHT = 16;
  const gw = await startGatewayProcess({
    store: 'sqlite',
    ws: { maxInFlight: WS_IN_FLIGHT },
    config: {
      plans: { big: { dailyCredits: 1e12, creditsPerSecond: 1e12, failover: false } },
      keys: [{ key: 'crash-key-000000001', id: 'crash', plan: 'big' }],
      networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url, connections: 64 }] }],
      plugins: { 'ledger-sqlite': { path } },
    },
  });
  t.teardown(() => gw.kill());
  const http = httpLoad([`${gw.origin}/eth/v3/crash-key-000000001`], HTTP_WORKERS);
  const ws = await openWs(`${gw.origin.replace('http', 'ws')}/eth/ws/v3/crash-key-000000001`);
  let wsDelivered = 0;
  let next = 0;
  // The WebSocket client keeps WS_IN_FLIGHT calls going: a new one for each answer.
  ws.socket.on('message', (data) => {
    if (String(data).includes('"result"')) wsDelivered++;
    ws.send(rpc('eth_blockNumber', [], next++));
  });
  for (; next < WS_IN_FLIGHT; next++) ws.send(rpc('eth_blockNumber', [], next));

  await until(() => ({ http: http.tally.delivered, ws: wsDelivered }), (d) => d.http >= 300 && d.ws >= 300, 'calls over both transports before the kill');
  await gw.kill();
  const tally = await http.stop();
  await ws.closed;
  const delivered = tally.delivered + wsDelivered;
  const window = HTTP_WORKERS + WS_IN_FLIGHT;

  const store = openSqliteStore({ path });
  t.teardown(() => store.close());
  const charged = store.ledger.balance('crash', 1e12, new Date()).used / COST;
  const usageCalls = store.usage.usage('crash', utcDay(new Date())).eth_blockNumber?.calls ?? 0;
  report('gateway kill -9 (SQLite, HTTP + WebSocket)', { delivered, httpDelivered: tally.delivered, wsDelivered, charged, usageCalls, crashWindow: window });
  t.ok(charged >= delivered, `every delivered call is charged (${charged} >= ${delivered})`);
  t.ok(charged <= delivered + window, `at most the ${window} calls in flight at the kill are charged on top (${charged - delivered})`);
  t.ok(Math.abs(usageCalls - delivered) <= window, `usage counts the calls made, within the crash window (${usageCalls} vs ${delivered})`);
});
