import t from 'tap';
import { Agent, createServer } from 'node:http';
import { createGateway } from '../core/index.js';
import { httpTransport } from '../plugins/http/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { ledgerSqlite } from '../plugins/ledger-sqlite/index.js';
import { admin } from '../plugins/admin/index.js';
import { health } from '../plugins/health/index.js';
import { gatewayLogger, metrics } from '../plugins/metrics/index.js';
import { post, rpc } from './helpers/json-rpc.js';
import { closedPort } from './helpers/closed-port.js';
import { startTinyUpstream } from './helpers/tiny-upstream.js';
import { until } from './helpers/until.js';
import { cleanUpWorkersGateway, startWorkersGateway, workersCall, workersConfig } from './helpers/workers-cli.js';

const KEY = 'admin-listener-key-000001';
const ADMIN_TOKEN = 'admin-listener-token-0123456789abcdef';

/** The value of one sample of a Prometheus text, or undefined when it is absent. */
function sample(text: string, name: string, labels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

async function status(url: string, headers: Record<string, string> = {}): Promise<number> {
  const res = await fetch(url, { headers });
  await res.arrayBuffer();
  return res.status;
}

t.test('with server.adminListen, admin, dashboard and metrics answer there only; the public port answers them 404', async (t) => {
  const upstream = await startTinyUpstream();
  t.teardown(() => upstream.close());
  const gateway = await createGateway({
    config: {
      server: { host: '127.0.0.1', port: 0, adminListen: { port: 0 } },
      keys: [{ key: KEY, id: 'listener', plan: 'growth' }],
      networks: [{ name: 'eth', families: ['evm'], upstreams: [{ name: 'tiny', url: upstream.url }] }],
      plugins: { admin: { token: ADMIN_TOKEN } },
    },
    plugins: [ledgerSqlite({ path: ':memory:' }), admin(), metrics(), health(), httpTransport(), evmFamily()],
    logger: gatewayLogger('silent'),
  });
  t.teardown(() => gateway.close());
  const server = await gateway.listen(0, '127.0.0.1');
  const pub = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  t.ok(gateway.adminServer, 'listen started the operator listener');
  const adminAddress = gateway.adminServer!.address() as { address: string; port: number };
  t.equal(adminAddress.address, '127.0.0.1', 'on the default interface');
  const ops = `http://127.0.0.1:${adminAddress.port}`;
  const bearer = { authorization: `Bearer ${ADMIN_TOKEN}` };

  // The clients' routes: on the public port, not on the operator's.
  t.equal((await post(`${pub}/eth/v3/${KEY}`, rpc('eth_blockNumber', []))).status, 200);
  t.equal((await post(`${ops}/eth/v3/${KEY}`, rpc('eth_blockNumber', []))).status, 404, 'no JSON-RPC on the operator listener');
  t.equal(await status(`${pub}/healthz`), 200, 'the balancer checks the public port');

  // The operator's routes: on the operator listener, 404 on the public port as any unknown path.
  t.equal(await status(`${ops}/metrics`), 200);
  t.equal(await status(`${pub}/metrics`), 404);
  t.equal(await status(`${ops}/admin/v1/keys`, bearer), 200);
  t.equal(await status(`${pub}/admin/v1/keys`, bearer), 404);
  t.equal(await status(`${ops}/admin/`), 200, 'the dashboard');
  t.equal(await status(`${pub}/admin/`), 404);
  const unknown = await fetch(`${pub}/metrics`);
  t.same(await unknown.json(), await (await fetch(`${pub}/no-such-path`)).json(), 'the same answer as an unknown path');

  // An embedder mounts each side on a server of its own: mount() is the clients' side, as listen's.
  const own = async (routes: 'admin' | undefined): Promise<string> => {
    const handlers = gateway.mount(routes === undefined ? {} : { routes });
    const host = createServer((req, res) => handlers.listener(req, res));
    await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
    t.teardown(() => new Promise<void>((resolve) => host.close(() => resolve())));
    return `http://127.0.0.1:${(host.address() as { port: number }).port}`;
  };
  const embeddedOps = await own('admin');
  const embeddedPublic = await own(undefined);
  t.equal(await status(`${embeddedOps}/metrics`), 200);
  t.equal(await status(`${embeddedPublic}/metrics`), 404);
  t.equal((await post(`${embeddedPublic}/eth/v3/${KEY}`, rpc('eth_blockNumber', []))).status, 200);
  t.equal((await post(`${embeddedOps}/eth/v3/${KEY}`, rpc('eth_blockNumber', []))).status, 404);
});

t.test('without server.adminListen, every route stays on the one port', async (t) => {
  const upstream = await startTinyUpstream();
  t.teardown(() => upstream.close());
  const gateway = await createGateway({
    config: {
      server: { host: '127.0.0.1', port: 0 },
      keys: [{ key: KEY, id: 'listener', plan: 'growth' }],
      networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url }] }],
      plugins: { admin: { token: ADMIN_TOKEN } },
    },
    plugins: [ledgerSqlite({ path: ':memory:' }), admin(), metrics(), httpTransport(), evmFamily()],
    logger: gatewayLogger('silent'),
  });
  t.teardown(() => gateway.close());
  const server = await gateway.listen(0, '127.0.0.1');
  const pub = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  t.equal(gateway.adminServer, undefined);
  t.equal(await status(`${pub}/metrics`), 200);
  t.equal(await status(`${pub}/admin/v1/keys`, { authorization: `Bearer ${ADMIN_TOKEN}` }), 200);
  t.equal((await post(`${pub}/eth/v3/${KEY}`, rpc('eth_blockNumber', []))).status, 200);
});

t.test('per-upstream metrics move with real calls: latency by outcome, failures by kind, attempts in flight', async (t) => {
  const slow = await startTinyUpstream({ delayMs: 300 });
  t.teardown(() => slow.close());
  const dead = await closedPort();
  // A node that answers every request with HTTP 500.
  const failing = createServer((req, res) => { req.resume(); req.on('end', () => res.writeHead(500).end('down')); });
  await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => failing.close(() => resolve())));
  const secretPath = 'provider-credential-in-the-path-42';
  const gateway = await createGateway({
    config: {
      server: { host: '127.0.0.1', port: 0, adminListen: { port: 0 } },
      keys: [{ key: KEY, id: 'listener', plan: 'growth' }],
      networks: [
        { name: 'eth', families: ['evm'], upstreams: [{ name: 'slow-node', url: slow.url }] },
        { name: 'broken', families: ['evm'], upstreams: [{ url: `http://127.0.0.1:${dead}/v1/${secretPath}` }] },
        { name: 'failing', families: ['evm'], upstreams: [{ name: 'http-500', url: `http://127.0.0.1:${(failing.address() as { port: number }).port}` }] },
      ],
      failover: { probe: { intervalMs: 0 } },
    },
    plugins: [metrics(), httpTransport(), evmFamily()],
    logger: gatewayLogger('silent'),
  });
  t.teardown(() => gateway.close());
  const server = await gateway.listen(0, '127.0.0.1');
  const pub = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const ops = `http://127.0.0.1:${(gateway.adminServer!.address() as { port: number }).port}`;
  const scrape = async (): Promise<string> => (await fetch(`${ops}/metrics`)).text();
  const eth = '{network="eth",upstream="slow-node"';

  // A call held by the upstream shows as an attempt in flight, and is gone once answered.
  const held = post(`${pub}/eth/v3/${KEY}`, rpc('eth_blockNumber', []));
  await until('the attempt is in flight', async () => sample(await scrape(), 'tollgate_upstream_attempts_in_flight', eth) === 1);
  t.equal((await held).status, 200);
  const afterOne = await scrape();
  t.equal(sample(afterOne, 'tollgate_upstream_attempts_in_flight', eth), 0);
  t.equal(sample(afterOne, 'tollgate_upstream_attempt_duration_seconds_count', `${eth},outcome="ok"`), 1);
  // prom-client writes a bucket's `le` first.
  const bucket = (le: string): number | undefined => sample(afterOne, 'tollgate_upstream_attempt_duration_seconds_bucket', `{le="${le}",network="eth",upstream="slow-node",outcome="ok"}`);
  t.equal(bucket('0.25'), 0, 'a 300 ms answer is above the 0.25 s bucket');
  t.equal(bucket('0.5'), 1);

  // An upstream that refuses connections: each attempt counted as a connect failure.
  const failed = await post(`${pub}/broken/v3/${KEY}`, rpc('eth_blockNumber', []));
  t.not(failed.status, 200);
  const text = await scrape();
  t.equal(sample(text, 'tollgate_upstream_attempt_errors_total', '{network="broken",upstream="broken-primary-1",kind="connect"}'), 1);
  t.equal(sample(text, 'tollgate_upstream_attempt_duration_seconds_count', '{network="broken",upstream="broken-primary-1",outcome="connect"}'), 1);
  t.notOk(text.includes(secretPath), 'no upstream URL in any label');

  // An upstream that answers HTTP 500: a `status` failure.
  t.not((await post(`${pub}/failing/v3/${KEY}`, rpc('eth_blockNumber', []))).status, 200);
  const afterStatus = await scrape();
  t.equal(sample(afterStatus, 'tollgate_upstream_attempt_errors_total', '{network="failing",upstream="http-500",kind="status"}'), 1);
  t.equal(sample(afterStatus, 'tollgate_upstream_attempts_in_flight', '{network="failing",upstream="http-500"}'), 0);
  t.notOk(/http:\/\/|127\.0\.0\.1:/.test(text), 'nor any address of one');
});

t.test('with --workers 2 and --admin-port, the group\'s metrics answer on the operator port only', async (t) => {
  t.setTimeout(300_000);
  const upstream = await startTinyUpstream();
  t.teardown(() => upstream.close());
  const adminPort = await closedPort();
  const gateway = await startWorkersGateway(workersConfig({ url: upstream.url }), ['--workers', '2', '--admin-port', String(adminPort)]);
  t.teardown(() => cleanUpWorkersGateway(gateway));
  t.match(gateway.output(), new RegExp(`Metrics: +http://127\\.0\\.0\\.1:${adminPort}/metrics`), 'the banner points to the operator port');
  const agent = new Agent({ keepAlive: false });
  t.teardown(() => agent.destroy());
  for (let i = 0; i < 6; i++) t.equal((await workersCall(gateway.origin, agent)).status, 200);
  t.equal(await status(`${gateway.origin}/metrics`), 404, 'not on the public port');
  const text = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();
  t.equal(sample(text, 'tollgate_calls_total', '{network="eth",method="eth_chainId",status="ok"}'), 6, 'calls summed over the workers');
  t.equal(sample(text, 'tollgate_upstream_attempt_duration_seconds_count', '{network="eth",upstream="node",outcome="ok"}'), 6, 'upstream attempts summed over the workers');
  t.match(text, /^tollgate_workers\{state="serving"\} 2$/m, 'the group\'s own metrics');
});
