import t from 'tap';
import { spawn } from 'node:child_process';
import { createServer as createTcpServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { firstValueFrom, from, lastValueFrom, mergeMap, NEVER, toArray } from 'rxjs';
import { createPublicClient, http } from 'viem';
import { createGateway, type Gateway } from '../../core/index.js';
import { Tokens } from '../../core/plugin-api.js';
import { type CreditLedger } from '../../core/store-api.js';
import { evmFamily } from '../../plugins/evm/index.js';
import { exampleDir, startExample, type ExampleProcess } from '../helpers/example-process.js';
import { post, rpc } from '../helpers/json-rpc.js';
import { alive, childPids } from '../helpers/processes.js';
import { createWorker, handler, runJobs, respond, type Job } from '../../examples/transport-free/worker.js';
import { closeDemoGateway, demoGateway, DEMO_API_KEY, DEMO_KEY_ID } from '../../examples/transport-free/gateway.js';
import { TSX_NODE_ARGS } from '../helpers/tsx-node-args.js';

// examples/transport-free: a gateway with no transport, called through gateway.handle(). First as a
// process (`npm start`: a small HTTP front turning requests into handler events), then in process.

const ACCOUNT_0 = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';

async function used(gateway: Gateway, keyId = DEMO_KEY_ID): Promise<number> {
  const ledger = gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);
  return (await ledger.balance(keyId, 1e9, new Date())).used;
}

t.test('npm start: the HTTP front over handler()', async (t) => {
  const example: ExampleProcess = await startExample('transport-free');
  t.teardown(() => example.stop());
  const url = `${example.origin}/eth/v3/${DEMO_API_KEY}`;
  t.match(example.output(), /^Listening on http:\/\/127\.0\.0\.1:\d+$/m, 'the listening line, exactly');

  t.test('viem over HTTP', async (t) => {
    const client = createPublicClient({ transport: http(url, { retryCount: 0 }) });
    t.equal(await client.getChainId(), 31337);
    t.ok((await client.getBlockNumber()) >= 3n, 'the seeded blocks are there');
    const balance = await client.getBalance({ address: ACCOUNT_0 });
    t.ok(balance > 0n && balance < 10_000n * 10n ** 18n, 'account 0 holds its dev ether, less what the seed spent');
  });

  t.test('a single call', async (t) => {
    const res = await post(url, rpc('eth_chainId', []));
    t.equal(res.status, 200);
    t.equal(res.headers['content-type'], 'application/json');
    t.equal(res.headers['x-tollgate-upstream'], 'anvil');
    t.same(res.json, { jsonrpc: '2.0', id: 1, result: '0x7a69' });
  });

  t.test('a batch, answered in request order', async (t) => {
    const res = await post(url, [rpc('eth_blockNumber', [], 'b'), rpc('eth_chainId', [], 'a'), rpc('eth_nope', [], 'c')]);
    t.equal(res.status, 200);
    const answers = res.json as Array<{ id: string; result?: string; error?: { code: number } }>;
    t.same(answers.map((a) => a.id), ['b', 'a', 'c']);
    t.match(answers[0]!.result, /^0x[0-9a-f]+$/);
    t.equal(answers[1]!.result, '0x7a69');
    t.equal(answers[2]!.error?.code, -32601);
  });

  t.test('a bad key: 401 and the JSON-RPC error', async (t) => {
    const res = await post(`${example.origin}/eth/v3/not-a-key`, rpc('eth_chainId', []));
    t.equal(res.status, 401);
    t.same(res.json, { jsonrpc: '2.0', id: 1, error: { code: -33001, message: 'Invalid API key' } });
  });

  t.test('an unknown method: -32601', async (t) => {
    const res = await post(url, rpc('eth_mine', []));
    t.equal(res.status, 200);
    t.same(res.json, { jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'the method eth_mine does not exist/is not available' } });
  });

  t.test('bad JSON, a notification, the front\'s own 404 and 405', async (t) => {
    const bad = await post(url, '{"jsonrpc":');
    t.equal(bad.status, 400);
    t.equal((bad.json as { error: { code: number } }).error.code, -32700);
    const note = await post(url, { jsonrpc: '2.0', method: 'eth_chainId', params: [] });
    t.equal(note.status, 204);
    t.equal(note.text, '');
    const unknown = await post(`${example.origin}/nowhere`, rpc('eth_chainId', []));
    t.equal(unknown.status, 404);
    const get = await post(url, '', {}, 'GET');
    t.equal(get.status, 405);
    t.equal(get.headers.allow, 'POST');
  });

  t.test('SIGTERM: exit 0, and Anvil is gone with it', async (t) => {
    const pid = example.child.pid!;
    const children = childPids(pid);
    t.ok(children.length > 0, 'the example runs Anvil as a child');
    t.equal(await example.stop(), 0);
    t.match(example.output(), /Stopped/);
    for (let i = 0; i < 50 && children.some(alive); i++) await new Promise((r) => setTimeout(r, 100));
    t.same(children.filter(alive), [], 'no child process left behind');
  });
});

t.test('npm run queue: jobs from standard input, results as they finish', async (t) => {
  const jobs = [
    { id: 'chain', apiKey: DEMO_API_KEY, body: rpc('eth_chainId', []) },
    { id: 'balance', apiKey: DEMO_API_KEY, body: rpc('eth_getBalance', [ACCOUNT_0, 'latest']) },
    { id: 'stranger', apiKey: 'not-a-key', body: rpc('eth_chainId', []) },
  ];
  const child = spawn(process.execPath, [...TSX_NODE_ARGS, 'queue.ts', '-'], { cwd: exampleDir('transport-free'), stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c));
  child.stderr.on('data', (c: Buffer) => (stderr += c));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  t.teardown(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL'); });
  child.stdin.end(jobs.map((j) => JSON.stringify(j)).join('\n') + '\n');
  t.equal(await exited, 0, stderr);
  const lines = stdout.trim().split('\n');
  const results = new Map(lines.slice(0, -1).map((line) => { const r = JSON.parse(line) as { id: string; status: number; credits: number; response: { result?: string; error?: { code: number } } }; return [r.id, r]; }));
  t.same([...results.keys()].sort(), ['balance', 'chain', 'stranger']);
  t.same(results.get('chain'), { id: 'chain', status: 200, response: { jsonrpc: '2.0', id: 1, result: '0x7a69' }, credits: 5 });
  t.equal(results.get('balance')!.credits, 80);
  t.equal(results.get('stranger')!.status, 401);
  t.equal(results.get('stranger')!.credits, 0);
  t.equal(lines.at(-1), 'credits charged for these jobs: 85; key "demo" today: 85 used, 14999915 left');
});

t.test('in process: handler(), respond() and the Observable of gateway.handle()', async (t) => {
  t.teardown(() => closeDemoGateway());
  const gateway = await demoGateway();
  t.equal(await demoGateway(), gateway, 'one gateway per process, reused by every call');

  t.test('handler(event) answers as a serverless function and charges the call', async (t) => {
    const before = await used(gateway);
    const result = await handler({ apiKey: DEMO_API_KEY, body: JSON.stringify(rpc('eth_getBalance', [ACCOUNT_0, 'latest'])) });
    t.equal(result.statusCode, 200);
    t.equal(result.headers['content-type'], 'application/json');
    t.match(JSON.parse(result.body), { jsonrpc: '2.0', id: 1, result: /^0x[0-9a-f]+$/ });
    t.equal(await used(gateway) - before, 80, 'eth_getBalance costs 80 credits');

    const refused = await handler({ apiKey: DEMO_API_KEY, body: rpc('eth_getBalance', ['0x1234', 'latest']) });
    t.equal(refused.statusCode, 200);
    t.equal(JSON.parse(refused.body).error.code, -32602);
    t.equal(await used(gateway) - before, 80, 'invalid params cost nothing');
  });

  t.test('gateway.handle() is a lazy Observable of { status, headers, body, contexts }', async (t) => {
    const before = await used(gateway);
    const call$ = gateway.handle({ network: 'eth', apiKey: DEMO_API_KEY, body: rpc('eth_blockNumber', []) });
    t.equal(await used(gateway), before, 'nothing runs before it is subscribed');
    const output = await firstValueFrom(call$);
    t.equal(output.status, 200);
    t.equal(output.headers['x-tollgate-upstream'], 'anvil');
    t.equal(output.contexts.length, 1);
    t.equal(output.contexts[0]!.debit?.credits, 80);
    t.equal(output.contexts[0]!.key?.id, DEMO_KEY_ID);
    t.equal(await used(gateway) - before, 80);
    await firstValueFrom(call$);
    t.equal(await used(gateway) - before, 160, 'each subscription is a new call');
  });

  t.test('a batch: one context per entry, each charged on its own', async (t) => {
    const before = await used(gateway);
    const output = await firstValueFrom(gateway.handle({ network: 'eth', apiKey: DEMO_API_KEY, body: [rpc('eth_chainId', [], 1), rpc('eth_getTransactionCount', [ACCOUNT_0, 'latest'], 2), rpc('eth_mine', [], 3)] }));
    t.equal(output.status, 200);
    t.same(output.contexts.map((c) => c.call.method), ['eth_chainId', 'eth_getTransactionCount', 'eth_mine']);
    t.same(output.contexts.map((c) => c.error?.code), [undefined, undefined, -32601]);
    t.equal(await used(gateway) - before, 5 + 80, 'the unknown method is not charged');
  });

  t.test('many calls with mergeMap: bounded concurrency, every answer counted', async (t) => {
    const before = await used(gateway);
    let inFlight = 0;
    let most = 0;
    const outputs = await lastValueFrom(
      from(Array.from({ length: 12 }, (_, i) => i)).pipe(
        mergeMap(async (i) => {
          inFlight++;
          most = Math.max(most, inFlight);
          try {
            return await firstValueFrom(respond({ apiKey: DEMO_API_KEY, body: rpc('eth_chainId', [], i) }));
          } finally {
            inFlight--;
          }
        }, 3),
        toArray(),
      ),
    );
    t.equal(outputs.length, 12);
    t.ok(outputs.every((o) => o.statusCode === 200));
    t.same(outputs.map((o) => JSON.parse(o.body).id).sort((a: number, b: number) => a - b), Array.from({ length: 12 }, (_, i) => i));
    t.ok(most <= 3, `at most 3 at once (saw ${most})`);
    t.equal(await used(gateway) - before, 12 * 5);
  });

  t.test('runJobs: the queue worker reports status and credits per job', async (t) => {
    const before = await used(gateway);
    const jobs: Job[] = [
      { id: 'one', apiKey: DEMO_API_KEY, body: rpc('eth_chainId', []) },
      { id: 'two', apiKey: DEMO_API_KEY, body: [rpc('eth_blockNumber', [], 1), rpc('eth_chainId', [], 2)] },
      { id: 'bad-key', apiKey: 'nope', body: rpc('eth_chainId', []) },
      { id: 'note', apiKey: DEMO_API_KEY, body: { jsonrpc: '2.0', method: 'eth_chainId', params: [] } },
    ];
    const results = await lastValueFrom(runJobs(jobs, 2).pipe(toArray()));
    const byId = new Map(results.map((r) => [r.id, r]));
    t.same([...byId.keys()].sort(), ['bad-key', 'note', 'one', 'two']);
    t.same(byId.get('one'), { id: 'one', status: 200, response: { jsonrpc: '2.0', id: 1, result: '0x7a69' }, credits: 5 });
    t.equal(byId.get('two')!.credits, 85);
    t.same(byId.get('bad-key'), { id: 'bad-key', status: 401, response: { jsonrpc: '2.0', id: 1, error: { code: -33001, message: 'Invalid API key' } }, credits: 0 });
    t.same(byId.get('note'), { id: 'note', status: 204, response: undefined, credits: 5 }, 'a notification is charged, with no answer');
    t.equal(await used(gateway) - before, 5 + 85 + 5);
  });
});

t.test('timeouts: the handler\'s own, and the gateway\'s deadline before it', async (t) => {
  const stalled = await createWorker(async () => ({ handle: () => NEVER }), { timeoutMs: 50 }).handler({ apiKey: 'k', body: rpc('eth_chainId', []) });
  t.equal(stalled.statusCode, 504);
  t.same(JSON.parse(stalled.body), { jsonrpc: '2.0', id: null, error: { code: -33504, message: 'no answer within 50 ms' } });

  // An upstream that accepts connections and never answers.
  const sockets = new Set<Socket>();
  const silent = createTcpServer((socket) => { sockets.add(socket); socket.on('error', () => {}); });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  t.teardown(() => { for (const s of sockets) s.destroy(); silent.close(); });
  const gateway = await createGateway({
    config: {
      log: { level: 'silent' },
      keys: [{ key: 'slow-key-0001', id: 'slow', plan: 'core' }],
      networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}` }] }],
      failover: { deadlineMs: 300 },
    },
    plugins: [evmFamily()],
  });
  t.teardown(() => gateway.close());
  const worker = createWorker(async () => gateway, { timeoutMs: 5_000 });
  const started = Date.now();
  const result = await worker.handler({ apiKey: 'slow-key-0001', body: rpc('eth_chainId', []) });
  t.ok(Date.now() - started < 4_000, 'the gateway gave up first');
  t.equal(result.statusCode, 504);
  t.equal(JSON.parse(result.body).error.code, -33504);
  t.equal(await used(gateway, 'slow'), 0, 'and refunded the call');

  // The handler giving up first unsubscribes, which cancels the call: refunded as well.
  const impatient = createWorker(async () => gateway, { timeoutMs: 100 });
  const cut = await impatient.handler({ apiKey: 'slow-key-0001', body: rpc('eth_chainId', []) });
  t.equal(cut.statusCode, 504);
  t.equal(JSON.parse(cut.body).error.message, 'no answer within 100 ms');
  const deadline = Date.now() + 5_000;
  while ((await used(gateway, 'slow')) !== 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  t.equal(await used(gateway, 'slow'), 0, 'the handler\'s own timeout cancelled the call and it was refunded');
});
