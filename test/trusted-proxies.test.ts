import t from 'tap';
import { request as httpRequest } from 'node:http';
import WebSocket from 'ws';
import { createGateway, resolveConfig, ConfigError } from '../core/index.js';
import { AddressRanges } from '../core/plugin-api.js';
import { httpTransport } from '../plugins/http/index.js';
import { wsTransport } from '../plugins/ws/index.js';
import { evmFamily } from '../plugins/evm/index.js';
import { security } from '../plugins/security/index.js';
import { accessLog, gatewayLogger } from '../plugins/metrics/index.js';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { guardChild } from '../packages/devnet/src/orphan-guard.js';
import { startTinyUpstream } from './helpers/tiny-upstream.js';
import { until } from './helpers/until.js';
import { closedPort } from './helpers/closed-port.js';
import { haproxyAvailable } from './helpers/haproxy.js';

// Every 127/8 address is the loopback interface: 127.0.0.2 plays the balancer (trusted), 127.0.0.1 a
// client that connects directly and sends the header itself (not trusted).
const NETWORKS = [{ name: 'eth', families: ['evm'], upstreams: [{ url: 'http://127.0.0.1:1' }] }];
const BALANCER = '127.0.0.2';
const DIRECT = '127.0.0.1';
const KEY = 'forwarded-key-0000000001';
const V6_KEY = 'forwarded-v6-key-00000001';

interface Answer {
  readonly status: number;
  readonly body: { result?: unknown; error?: { code: number; message: string } };
}

/** A JSON-RPC POST over a real TCP connection from `localAddress`, with extra headers. */
function postFrom(localAddress: string, url: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] });
    const req = httpRequest(url, { method: 'POST', localAddress, headers: { 'content-type': 'application/json', connection: 'close', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Answer['body'] }));
    });
    req.once('error', reject);
    req.end(body);
  });
}

t.test('server.trustedProxies entries are checked with the configuration', async (t) => {
  const config = resolveConfig({ server: { trustedProxies: ['loopback', '10.0.0.0/8', 'fd00::/8', '192.0.2.1'] }, networks: NETWORKS });
  t.same(config.server.trustedProxies, ['loopback', '10.0.0.0/8', 'fd00::/8', '192.0.2.1']);
  t.same(resolveConfig({ networks: NETWORKS }).server.trustedProxies, [], 'no proxy is trusted by default');
  const error = t.throws(() => resolveConfig({ server: { trustedProxies: ['10.0.0.0/33', 'balancer.internal', 'lan', '::1/129'] }, networks: NETWORKS })) as ConfigError;
  t.ok(error instanceof ConfigError);
  t.same(error.problems, [
    'server.trustedProxies[0]: "10.0.0.0/33": the prefix length must be 0 to 32',
    'server.trustedProxies[1]: "balancer.internal" is not an address, a CIDR range (10.0.0.0/8, fd00::/8) or one of loopback, private, linklocal',
    'server.trustedProxies[2]: "lan" is not an address, a CIDR range (10.0.0.0/8, fd00::/8) or one of loopback, private, linklocal',
    'server.trustedProxies[3]: "::1/129": the prefix length must be 0 to 128',
  ]);
});

t.test('address ranges match IPv4, IPv6 and IPv4 seen as IPv6', async (t) => {
  const ranges = new AddressRanges(['private', '2001:db8::/32', '198.51.100.7']);
  t.ok(ranges.includes('10.1.2.3'));
  t.ok(ranges.includes('::ffff:192.168.0.9'), 'a dual-stack socket reports IPv4 peers as ::ffff:a.b.c.d');
  t.ok(ranges.includes('fd12::1'));
  t.ok(ranges.includes('2001:db8:1::5'));
  t.ok(ranges.includes('198.51.100.7'));
  t.notOk(ranges.includes('198.51.100.8'));
  t.notOk(ranges.includes('8.8.8.8'));
  t.notOk(ranges.includes('not-an-address'));
  t.notOk(new AddressRanges([]).includes('127.0.0.1'));
});

t.test('the access log and a client-address allowlist see the forwarded address only from a trusted proxy', async (t) => {
  const upstream = await startTinyUpstream();
  t.teardown(() => upstream.close());
  const lines: string[] = [];
  const gateway = await createGateway({
    config: {
      server: { host: '127.0.0.1', port: 0, trustedProxies: [BALANCER, '10.0.0.0/8'] },
      keys: [
        { key: KEY, id: 'office', plan: 'growth', settings: { security: { clientAddresses: ['198.51.100.0/24'] } } },
        { key: V6_KEY, id: 'v6-office', plan: 'growth', settings: { security: { clientAddresses: ['2001:db8::/32'] } } },
      ],
      networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url }] }],
    },
    plugins: [httpTransport(), wsTransport(), evmFamily(), security(), accessLog()],
    logger: gatewayLogger('info', { write: (line: string) => void lines.push(line) }),
  });
  t.teardown(() => gateway.close());
  // A dual-stack socket: IPv4 peers arrive as ::ffff:127.0.0.2 and must still match the IPv4 entry.
  const server = await gateway.listen(0, '::');
  const port = (server.address() as { port: number }).port;
  const url = (key: string): string => `http://127.0.0.1:${port}/eth/v3/${key}`;
  const remotes = (): string[] => lines.map((l) => JSON.parse(l) as { log?: string; remote?: string }).filter((l) => l.log === 'access').map((l) => l.remote ?? '');
  const lastRemote = async (count: number): Promise<string> => {
    await until(`access line ${count}`, () => remotes().length >= count);
    return remotes()[count - 1]!;
  };

  // Through the balancer: the client it names is the client.
  const viaBalancer = await postFrom(BALANCER, url(KEY), { 'x-forwarded-for': '198.51.100.7' });
  t.equal(viaBalancer.status, 200, JSON.stringify(viaBalancer.body));
  t.equal(viaBalancer.body.result, '0x1');
  t.equal(await lastRemote(1), '198.51.100.7', 'the access log shows the client, not the balancer');

  // Directly, with the same header: the header is the client's own claim and is ignored.
  const spoofed = await postFrom(DIRECT, url(KEY), { 'x-forwarded-for': '198.51.100.7' });
  t.equal(spoofed.status, 403, JSON.stringify(spoofed.body));
  t.match(spoofed.body.error?.message, /client address not allowed: 127\.0\.0\.1;/);
  t.equal(await lastRemote(2), DIRECT, 'the access log shows the peer, in IPv4 form although the socket says ::ffff:127.0.0.1');

  // A chain: hops that trusted proxies added are skipped, the rightmost untrusted one is the client;
  // what the client wrote at the left is not believed.
  const chain = await postFrom(BALANCER, url(KEY), { 'x-forwarded-for': '203.0.113.9, 198.51.100.20, 10.1.1.1' });
  t.equal(chain.status, 200, JSON.stringify(chain.body));
  t.equal(await lastRemote(3), '198.51.100.20');
  const leftSpoof = await postFrom(BALANCER, url(KEY), { 'x-forwarded-for': '198.51.100.7, 203.0.113.9' });
  t.equal(leftSpoof.status, 403, 'the client prepended an allowed address; the balancer appended the real one');
  t.equal(await lastRemote(4), '203.0.113.9');

  // A hop that is no address ends the walk at the proxy that reported it.
  const garbage = await postFrom(BALANCER, url(KEY), { 'x-forwarded-for': '198.51.100.7, unknown' });
  t.equal(garbage.status, 403);
  t.equal(await lastRemote(5), BALANCER);

  // An IPv6 client, bare or in brackets with a port.
  const v6 = await postFrom(BALANCER, url(V6_KEY), { 'x-forwarded-for': '2001:db8:cafe::17' });
  t.equal(v6.status, 200, JSON.stringify(v6.body));
  t.equal(await lastRemote(6), '2001:db8:cafe::17');
  const v6Port = await postFrom(BALANCER, url(V6_KEY), { 'x-forwarded-for': '[2001:db8:cafe::18]:4711' });
  t.equal(v6Port.status, 200, JSON.stringify(v6Port.body));
  t.equal(await lastRemote(7), '2001:db8:cafe::18');

  // RFC 7239 Forwarded is not read, even from the balancer: the balancer is then the client.
  const forwarded = await postFrom(BALANCER, url(V6_KEY), { forwarded: 'for="[2001:db8:cafe::17]:4711";proto=https' });
  t.equal(forwarded.status, 403);
  t.equal(await lastRemote(8), BALANCER);

  // WebSocket: the upgrade request's forwarded address is the connection's, for every message on it.
  const wsCall = async (localAddress: string): Promise<{ result?: unknown; error?: { message: string } }> => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/eth/ws/v3/${KEY}`, { localAddress, headers: { 'x-forwarded-for': '198.51.100.7' } });
    t.teardown(() => ws.terminate());
    await new Promise<void>((resolve, reject) => { ws.once('open', () => resolve()); ws.once('error', reject); });
    const answer = new Promise<string>((resolve) => ws.once('message', (data) => resolve(String(data))));
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'eth_blockNumber', params: [] }));
    const parsed = JSON.parse(await answer) as { result?: unknown; error?: { message: string } };
    ws.close();
    return parsed;
  };
  t.equal((await wsCall(BALANCER)).result, '0x1');
  t.match((await wsCall(DIRECT)).error?.message, /client address not allowed: 127\.0\.0\.1;/);
});

t.test('without trusted proxies, forwarding headers are never read; a reload can name them', async (t) => {
  const upstream = await startTinyUpstream();
  t.teardown(() => upstream.close());
  const gateway = await createGateway({
    config: {
      server: { host: '127.0.0.1', port: 0 },
      keys: [{ key: KEY, id: 'office', plan: 'growth', settings: { security: { clientAddresses: ['198.51.100.0/24'] } } }],
      networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url }] }],
    },
    plugins: [httpTransport(), evmFamily(), security()],
    logger: gatewayLogger('silent'),
  });
  t.teardown(() => gateway.close());
  const server = await gateway.listen(0, '127.0.0.1');
  const port = (server.address() as { port: number }).port;
  const answer = await postFrom(BALANCER, `http://127.0.0.1:${port}/eth/v3/${KEY}`, { 'x-forwarded-for': '198.51.100.7' });
  t.equal(answer.status, 403);
  t.match(answer.body.error?.message, /client address not allowed: 127\.0\.0\.2/);

  // A reload that names the balancer applies from the next request on.
  await gateway.reload({ ...gateway.config, server: { ...gateway.config.server, trustedProxies: [BALANCER] } });
  const reloaded = await postFrom(BALANCER, `http://127.0.0.1:${port}/eth/v3/${KEY}`, { 'x-forwarded-for': '198.51.100.7' });
  t.equal(reloaded.status, 200, JSON.stringify(reloaded.body));
});

t.test('a client-address allowlist is checked with the key\'s settings', async (t) => {
  const error = await createGateway({
    config: {
      keys: [{ key: KEY, id: 'office', plan: 'growth', settings: { security: { clientAddresses: ['198.51.100.0/24', 'office-lan'] } } }],
      networks: NETWORKS,
    },
    plugins: [security(), evmFamily()],
    logger: gatewayLogger('silent'),
  }).then(() => undefined, (e: unknown) => e as Error);
  t.match(error?.message, /clientAddresses\[1\]: "office-lan" is not an address/);
});

/**
 * HAProxy on a TCP port of 127.0.0.3, `option forwardfor` as docs/operations.md advises, connecting to
 * `backendPort` from 127.0.0.2 (its `source`): the gateway sees the balancer at 127.0.0.2 and the
 * client in X-Forwarded-For.
 */
async function startForwardingHaproxy(backendPort: number): Promise<{ url: string; stop: () => Promise<void> }> {
  const port = await closedPort();
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-forwarding-'));
  const file = join(dir, 'haproxy.cfg');
  writeFileSync(file, [
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 30s',
    '  timeout server 30s',
    '  timeout tunnel 1h',
    '  option forwardfor',
    'frontend public',
    `  bind 127.0.0.3:${port}`,
    '  default_backend gateway',
    'backend gateway',
    `  server gw 127.0.0.1:${backendPort} source ${BALANCER}`,
    '',
  ].join('\n'));
  const child = spawn('haproxy', ['-db', '-f', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  const guard = guardChild(child);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGKILL');
      await gone;
    }
    await guard.release();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await until(`haproxy to listen: ${output}`, () => {
      if (child.exitCode !== null) throw new Error(`haproxy exited with ${child.exitCode}: ${output}`);
      return new Promise<boolean>((resolve) => {
        const probe = connect(port, '127.0.0.3');
        probe.once('connect', () => { probe.destroy(); resolve(true); });
        probe.once('error', () => resolve(false));
      });
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `http://127.0.0.3:${port}`, stop };
}

t.test('through a real HAProxy hop: the client HAProxy saw is the client, whatever header the client sent', async (t) => {
  t.ok(await haproxyAvailable(), 'haproxy is installed (apt-get install haproxy)');
  const upstream = await startTinyUpstream();
  t.teardown(() => upstream.close());
  const CLIENT = '127.0.0.5';
  const lines: string[] = [];
  const gateway = await createGateway({
    config: {
      server: { host: '127.0.0.1', port: 0, trustedProxies: [BALANCER] },
      keys: [
        { key: KEY, id: 'office', plan: 'growth', settings: { security: { clientAddresses: [CLIENT] } } },
        { key: V6_KEY, id: 'elsewhere', plan: 'growth', settings: { security: { clientAddresses: ['198.51.100.0/24'] } } },
      ],
      networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url }] }],
    },
    plugins: [httpTransport(), wsTransport(), evmFamily(), security(), accessLog()],
    logger: gatewayLogger('info', { write: (line: string) => void lines.push(line) }),
  });
  t.teardown(() => gateway.close());
  const server = await gateway.listen(0, '127.0.0.1');
  const haproxy = await startForwardingHaproxy((server.address() as { port: number }).port);
  t.teardown(() => haproxy.stop());
  const remotes = (): string[] => lines.map((l) => JSON.parse(l) as { log?: string; remote?: string }).filter((l) => l.log === 'access').map((l) => l.remote ?? '');

  const plain = await postFrom(CLIENT, `${haproxy.url}/eth/v3/${KEY}`, {});
  t.equal(plain.status, 200, JSON.stringify(plain.body));
  await until('an access line', () => remotes().length >= 1);
  t.equal(remotes()[0], CLIENT, 'the access log shows the client, not HAProxy');

  // The client claims an address of its own: HAProxy appends the one it saw, and that one counts.
  const claimed = await postFrom(CLIENT, `${haproxy.url}/eth/v3/${V6_KEY}`, { 'x-forwarded-for': '198.51.100.7' });
  t.equal(claimed.status, 403, JSON.stringify(claimed.body));
  t.match(claimed.body.error?.message, /client address not allowed: 127\.0\.0\.5/);
  const allowed = await postFrom(CLIENT, `${haproxy.url}/eth/v3/${KEY}`, { 'x-forwarded-for': '198.51.100.7' });
  t.equal(allowed.status, 200);
  await until('three access lines', () => remotes().length >= 3);
  t.same(remotes().slice(1, 3), [CLIENT, CLIENT]);

  // WebSocket through the same hop.
  const ws = new WebSocket(`${haproxy.url.replace('http', 'ws')}/eth/ws/v3/${KEY}`, { localAddress: CLIENT });
  t.teardown(() => ws.terminate());
  await new Promise<void>((resolve, reject) => { ws.once('open', () => resolve()); ws.once('error', reject); });
  const answer = new Promise<string>((resolve) => ws.once('message', (data) => resolve(String(data))));
  ws.send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'eth_blockNumber', params: [] }));
  t.equal((JSON.parse(await answer) as { result?: unknown }).result, '0x1', 'the allowlist passed over WebSocket');
  ws.close();
});
