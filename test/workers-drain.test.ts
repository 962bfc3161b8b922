import t from 'tap';
import { Agent } from 'node:http';
import { WebSocket } from 'ws';
import { startAnvil } from '@tollgate/devnet';
import { startGatedRelay } from './helpers/gated-relay.js';
import { alive } from './helpers/processes.js';
import { until } from './helpers/until.js';
import { cleanUpWorkersGateway, startWorkersGateway, workersCall as call, workersConfig as config, WORKERS_KEY, CHAIN_ID_CALL } from './helpers/workers-cli.js';

const KEY = WORKERS_KEY;
const CALL = CHAIN_ID_CALL;

// Each case starts a gateway of several processes (and a node) under tsx: slow on a loaded machine.
t.setTimeout(420_000);

t.test('SIGTERM drains every worker: calls in flight answered, WebSockets closed 1001, exit 0', async (t) => {
  const anvil = await startAnvil();
  t.teardown(() => anvil.stop());
  const relay = await startGatedRelay(anvil.url);
  t.teardown(() => relay.close());
  const gateway = await startWorkersGateway(config({ url: relay.url }), ['--workers', '2']);
  t.teardown(() => cleanUpWorkersGateway(gateway));
  const workers = gateway.workerPids();

  // WebSockets on both workers (round robin hands out connections in turn).
  const sockets = await Promise.all(Array.from({ length: 4 }, () => new Promise<{ ws: WebSocket; closed: Promise<number> }>((resolve, reject) => {
    const ws = new WebSocket(`${gateway.origin.replace('http', 'ws')}/eth/ws/v3/${KEY}`);
    const closed = new Promise<number>((done) => ws.once('close', (code) => done(code)));
    ws.once('open', () => resolve({ ws, closed }));
    ws.once('error', reject);
  })));
  t.equal(sockets.length, 4);

  // Calls in flight on both workers: the relay holds the node's answers.
  relay.gate();
  const agents = Array.from({ length: 6 }, () => new Agent({ keepAlive: true, maxSockets: 1 }));
  t.teardown(() => agents.forEach((a) => a.destroy()));
  const calls = agents.map((agent) => call(gateway.origin, agent));
  await until('the node holds six calls', () => relay.holding() === 6);
  gateway.child.kill('SIGTERM');
  await until('the primary drains', () => gateway.output().includes('"msg":"draining the workers"'));
  relay.open();

  const answers = await Promise.all(calls);
  t.same(answers.map((a) => [a.status, a.body.result]), Array(6).fill([200, '0x7a69']), 'every call in flight was answered');
  t.same(await Promise.all(sockets.map((s) => s.closed)), [1001, 1001, 1001, 1001], 'every WebSocket closed with 1001 (going away)');
  t.equal(await gateway.exited, 0, 'exit 0');
  for (const pid of workers) t.notOk(alive(pid), `worker ${pid} exited`);
  t.same(gateway.output().match(/worker stopped \(exited with code 0\)/g), ['worker stopped (exited with code 0)', 'worker stopped (exited with code 0)']);
});

t.test('a second SIGTERM ends a drain that waits on calls', async (t) => {
  const anvil = await startAnvil();
  t.teardown(() => anvil.stop());
  const relay = await startGatedRelay(anvil.url);
  t.teardown(() => relay.close());
  const gateway = await startWorkersGateway(config({ url: relay.url }), ['--workers', '2']);
  t.teardown(() => cleanUpWorkersGateway(gateway));
  const workers = gateway.workerPids();
  relay.gate();
  const agent = new Agent({ keepAlive: false });
  const held = call(gateway.origin, agent).catch((error: Error) => error);
  await until('the node holds the call', () => relay.holding() === 1);
  gateway.child.kill('SIGTERM');
  await until('the primary drains', () => gateway.output().includes('"msg":"draining the workers"'));
  const started = Date.now();
  gateway.child.kill('SIGTERM');
  t.equal(await gateway.exited, 1, 'exit 1: the drain was cut short');
  t.ok(Date.now() - started < 3_000, 'at once, not after the drain');
  await until('the workers are gone', () => workers.every((pid) => !alive(pid)));
  t.ok(await held, 'the held call ended');
  t.match(gateway.output(), /SIGTERM again during the drain: killing the workers still running/);
});

t.test('the drain deadline ends a drain that waits on calls', async (t) => {
  const anvil = await startAnvil();
  t.teardown(() => anvil.stop());
  const relay = await startGatedRelay(anvil.url);
  t.teardown(() => relay.close());
  const gateway = await startWorkersGateway({ ...config({ url: relay.url }, { drainTimeoutMs: 1000 }) }, ['--workers', '2']);
  t.teardown(() => cleanUpWorkersGateway(gateway));
  const workers = gateway.workerPids();
  relay.gate();
  const held = call(gateway.origin, new Agent({ keepAlive: false })).catch((error: Error) => error);
  await until('the node holds the call', () => relay.holding() === 1);
  const started = Date.now();
  gateway.child.kill('SIGTERM');
  t.equal(await gateway.exited, 1, 'exit 1: the deadline cut the drain short');
  const took = Date.now() - started;
  t.ok(took >= 900 && took < 10_000, `after the 1000 ms deadline (${took} ms)`);
  await until('the workers are gone', () => workers.every((pid) => !alive(pid)));
  t.ok(await held, 'the held call ended');
  t.match(gateway.output(), /the drain took longer than 1000 ms: killing the workers still running/);
});
