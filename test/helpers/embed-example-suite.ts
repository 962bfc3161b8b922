import t from 'tap';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { createPublicClient, http, parseEther, webSocket } from 'viem';
import { startExample } from './example-process.js';
import { post, rpc } from './json-rpc.js';
import { openWs, refusedWs } from './ws-client.js';
import { alive, childProcesses } from './processes.js';

/**
 * What differs between the embedding examples: the folder, the body of the host's own 404, and an
 * optional route of the host's that parses JSON bodies itself (so mounting Tollgate ahead of the
 * framework's body parser must leave those routes working).
 */
export interface EmbedExample {
  /** The folder under examples/. */
  readonly name: string;
  /** The host's own 404 body for `path`. */
  readonly notFound: (path: string) => unknown;
  /** `POST /api/echo` answers `{ received: body }` after the framework parsed the body. */
  readonly echoes?: boolean;
}

const KEY = 'embed-demo-key-0001';
const UNTOUCHED_ACCOUNT = '0xa0Ee7A142d267C1f36714E4a8F75612F20a79720'; // Anvil's 10th dev account: the seed never spends from it

/**
 * Runs an embedding example as its README says (an existing server with routes of its own and
 * Tollgate mounted at /rpc on the same port), calls it with real clients, then stops it with SIGTERM.
 */
export async function embedExampleSuite(example: EmbedExample): Promise<void> {
  const ex = await startExample(example.name);
  t.teardown(() => { if (ex.child.exitCode === null && ex.child.signalCode === null) ex.child.kill('SIGKILL'); });
  const rpcUrl = `${ex.origin}/rpc/eth/v3/${KEY}`;
  const wsUrl = `${ex.origin.replace('http', 'ws')}/rpc/eth/ws/v3/${KEY}`;

  t.test('viem over HTTP and WebSocket, through /rpc', async (t) => {
    const overHttp = createPublicClient({ transport: http(rpcUrl, { retryCount: 0 }) });
    const overWs = createPublicClient({ transport: webSocket(wsUrl, { retryCount: 0, reconnect: false, keepAlive: false }) });
    t.teardown(async () => { const { socket } = await overWs.transport.getRpcClient(); socket.close(); });
    t.equal(await overHttp.getChainId(), 31337, 'eth_chainId over HTTP (Anvil)');
    t.equal(await overWs.getChainId(), 31337, 'eth_chainId over WebSocket');
    const height = await overHttp.getBlockNumber({ cacheTime: 0 });
    t.ok(height > 0n, 'the seeded chain has blocks');
    t.equal(await overWs.getBlockNumber({ cacheTime: 0 }), height, 'both transports see the same head');
    t.equal(await overHttp.getBalance({ address: UNTOUCHED_ACCOUNT }), parseEther('10000'), 'eth_getBalance over HTTP');
    t.equal(await overWs.getBalance({ address: UNTOUCHED_ACCOUNT }), parseEther('10000'), 'eth_getBalance over WebSocket');
  });

  t.test('raw JSON-RPC over HTTP: single call, batch, bad key, unknown method', async (t) => {
    const single = await post(rpcUrl, rpc('eth_chainId', []));
    t.equal(single.status, 200);
    t.match(single.headers['content-type'], /application\/json/);
    t.same(single.json, { jsonrpc: '2.0', id: 1, result: '0x7a69' });

    const batch = await post(rpcUrl, [rpc('eth_chainId', [], 1), rpc('eth_getBalance', [UNTOUCHED_ACCOUNT, 'latest'], 2)]);
    t.equal(batch.status, 200);
    t.same(batch.json, [
      { jsonrpc: '2.0', id: 1, result: '0x7a69' },
      { jsonrpc: '2.0', id: 2, result: `0x${parseEther('10000').toString(16)}` },
    ], 'a batch is answered entry by entry, in request order');

    const badKey = await post(`${ex.origin}/rpc/eth/v3/not-a-known-key`, rpc('eth_chainId', []));
    t.equal(badKey.status, 401);
    t.match(badKey.json, { jsonrpc: '2.0', id: 1, error: { code: -33001 } });

    const unknown = await post(rpcUrl, rpc('eth_doesNotExist', []));
    t.equal(unknown.status, 200);
    t.match(unknown.json, { jsonrpc: '2.0', id: 1, error: { code: -32601 } });

    const get = await post(rpcUrl, '', {}, 'GET');
    t.equal(get.status, 405, 'a GET on an RPC URL is Tollgate\'s to refuse');
    t.equal(get.headers.allow, 'POST');
  });

  t.test('the host keeps its own routes and its own 404', async (t) => {
    const health = await post(`${ex.origin}/health`, '', {}, 'GET');
    t.equal(health.status, 200);
    t.same(health.json, { ok: true });

    const home = await post(`${ex.origin}/`, '', {}, 'GET');
    t.equal(home.status, 200);
    t.match(home.headers['content-type'], /text\/html/);
    t.match(home.text, '/rpc/eth/v3/');

    const networks = await post(`${ex.origin}/api/networks`, '', {}, 'GET');
    t.same(networks.json, { networks: ['eth'] }, 'a host route reading the gateway');

    if (example.echoes === true) {
      const echo = await post(`${ex.origin}/api/echo`, { hello: example.name });
      t.equal(echo.status, 200);
      t.same(echo.json, { received: { hello: example.name } }, "the host's own routes still get their parsed JSON bodies");
    }

    for (const path of ['/nope', '/rpcx/eth/v3/' + KEY, '/rpc/eth/not-an-rpc-path', '/rpc/unknown-network/v3/' + KEY]) {
      const answer = await post(`${ex.origin}${path}`, rpc('eth_chainId', []));
      t.equal(answer.status, 404, `${path}: 404`);
      t.same(answer.json, example.notFound(path), `${path}: the host's 404, not a JSON-RPC error`);
    }
  });

  t.test('WebSocket: calls under /rpc, a bad key refused before the upgrade, other upgrades refused by the host', async (t) => {
    const ws = await openWs(wsUrl);
    t.teardown(() => ws.close());
    ws.send(rpc('eth_chainId', [], 7));
    t.same(await ws.waitFor(1), [{ jsonrpc: '2.0', id: 7, result: '0x7a69' }]);

    const badKey = await refusedWs(`${ex.origin.replace('http', 'ws')}/rpc/eth/ws/v3/not-a-known-key`);
    t.equal(badKey.status, 401);
    t.match(JSON.parse(badKey.body), { error: { code: -33001 } });

    t.equal((await refusedWs(`${ex.origin.replace('http', 'ws')}/chat`)).status, 404, 'an upgrade outside /rpc');
    t.equal((await refusedWs(`${ex.origin.replace('http', 'ws')}/rpc/unknown-network/ws/v3/${KEY}`)).status, 404, 'an upgrade under /rpc that Tollgate does not serve');
  });

  t.test('a failure to start is reported and exits 1', async (t) => {
    const badKey = await startExample(example.name, { TOLLGATE_API_KEY: 'short' }).then(
      async (started) => { await started.stop(); return undefined; },
      (error: Error) => error.message,
    );
    t.match(badKey, /exited with 1/, 'an invalid API key in the environment');
    t.match(badKey, /Tollgate did not start: invalid configuration:\s+keys\[0\]\.key: must match pattern/);

    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    t.teardown(() => taken.close());
    const port = (taken.address() as AddressInfo).port;
    const busy = await startExample(example.name, { PORT: String(port) }).then(
      async (started) => { await started.stop(); return undefined; },
      (error: Error) => error.message,
    );
    t.match(busy, /exited with 1/, 'a port already in use');
    t.match(busy, new RegExp(`Cannot listen on 127\\.0\\.0\\.1:${port}: .*EADDRINUSE`));
  });

  t.test('SIGTERM: WebSockets close with 1001, the process exits 0, Anvil is stopped', async (t) => {
    const ws = await openWs(wsUrl);
    ws.send(rpc('eth_blockNumber', [], 1));
    await ws.waitFor(1);
    const children = childProcesses(ex.child.pid!);
    t.ok(children.some((c) => c.command === 'anvil'), 'Anvil runs as a child process of the example');

    t.equal(await ex.stop(), 0, 'exit code 0');
    t.equal(await ws.closed, 1001, 'the open WebSocket was closed with 1001 (going away)');
    t.match(ex.output(), /SIGTERM: shutting down\nStopped\n/);
    const deadline = Date.now() + 10_000;
    while (children.some((c) => alive(c.pid)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    t.same(children.filter((c) => alive(c.pid)), [], 'no child process is left behind');
    await t.rejects(post(`${ex.origin}/health`, '', {}, 'GET'), 'the port no longer answers');
  });
}
