import t from 'tap';
import { Agent } from 'node:http';
import { alive, childProcesses } from './helpers/processes.js';
import { socketOwner } from './helpers/socket-owner.js';
import { until } from './helpers/until.js';
import { cleanUpWorkersGateway, startWorkersGateway, type WorkersGateway, workersCall as call, workersConfig as config, WORKERS_KEY, CHAIN_ID_CALL } from './helpers/workers-cli.js';

const KEY = WORKERS_KEY;
const CALL = CHAIN_ID_CALL;

async function metricsText(origin: string): Promise<string> {
  const res = await fetch(`${origin}/metrics`);
  return res.text();
}

// Each case starts a gateway of several processes (and a node) under tsx: slow on a loaded machine.
t.setTimeout(420_000);

t.test('the memory store is refused with several workers, in one line that says why and what to use', async (t) => {
  const run = startWorkersGateway({ ...config({ url: 'http://127.0.0.1:9' }), plugins: { 'ledger-sqlite': { path: ':memory:' } } }, ['--workers', '2'], 60_000);
  const error = await run.then(() => undefined, (e: Error) => e);
  t.ok(error, 'the gateway did not start');
  const message = error!.message;
  t.match(message, /exited with 1/, 'exit code 1');
  const lines = message.split(': ').slice(1).join(': ').trim().split('\n').filter((line) => line.trim() !== '');
  t.equal(lines.length, 1, 'one line');
  t.match(lines[0], /2 workers cannot share a store kept in memory .*use an SQLite file \(--data-dir <dir>\) or Redis \(--redis <url>\)/);
});

t.test('a worker killed with SIGKILL under load: the other answers every call, the dead one is replaced, logged with its cause', async (t) => {
  const gateway: WorkersGateway = await startWorkersGateway(config({ embedded: 'anvil' }), ['--workers', '2']);
  t.teardown(() => cleanUpWorkersGateway(gateway));
  await until('two workers run', () => gateway.workerPids().length === 2);
  const workers = gateway.workerPids();

  // The embedded node is started once, by the primary: one Anvil, none under a worker.
  t.equal(childProcesses(gateway.child.pid!).filter((c) => c.command === 'anvil').length, 1, 'one Anvil, the primary\'s child');
  for (const pid of workers) t.same(childProcesses(pid), [], `worker ${pid} started no node`);

  // Eight keep-alive connections, each pinned to the worker the primary handed it to.
  const loops = await Promise.all(Array.from({ length: 8 }, async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const first = await call(gateway.origin, agent);
    return { agent, owner: socketOwner(gateway.port, first.localPort, workers), ok: 1, failed: [] as string[], afterKill: 0 };
  }));
  t.teardown(() => loops.forEach((loop) => loop.agent.destroy()));
  const victim = workers[0]!;
  const survivor = workers[1]!;
  t.ok(loops.some((l) => l.owner === victim) && loops.some((l) => l.owner === survivor), `round robin gave both workers connections (${loops.map((l) => l.owner).join(',')})`);

  let running = true;
  let killed = false;
  // Whatever happens below, the load loops end with the test.
  t.teardown(() => { running = false; });
  const load = loops.map(async (loop) => {
    while (running) {
      try {
        const answer = await call(gateway.origin, loop.agent);
        if (answer.status === 200 && answer.body.result === '0x7a69') {
          loop.ok++;
          if (killed) loop.afterKill++;
        } else loop.failed.push(`${answer.status} ${JSON.stringify(answer.body)}`);
      } catch (error) {
        loop.failed.push((error as Error).message);
      }
    }
  });
  await until('every connection carried calls', () => loops.every((l) => l.ok >= 5));
  process.kill(victim, 'SIGKILL');
  killed = true;
  await until('a replacement serves', () => gateway.workerPids().length === 2 && !gateway.workerPids().includes(victim) && /"worker serving"[^\n]*\n[\s\S]*worker died \(killed by SIGKILL\)[\s\S]*"worker serving"/.test(gateway.output()), 120_000);
  await until('the survivor\'s connections carried calls after the kill', () => loops.filter((l) => l.owner === survivor).every((l) => l.afterKill >= 20), 120_000);
  running = false;
  await Promise.all(load);

  for (const [i, loop] of loops.entries()) {
    if (loop.owner === survivor) t.same(loop.failed, [], `connection ${i} (surviving worker): every call answered (${loop.ok})`);
    else t.ok(loop.failed.length <= 2, `connection ${i} (killed worker): only the call in flight at the kill failed (${loop.failed.join('; ')})`);
  }
  t.ok(alive(survivor), 'the surviving worker still runs');
  const death = gateway.output().split('\n').find((line) => line.includes('worker died'));
  t.match(death, /"signal":"SIGKILL"/, 'the log names the signal');
  t.match(death, /"restartInMs":\d+/, 'and the restart delay');

  const replacement = gateway.workerPids().find((pid) => pid !== survivor)!;
  const fresh = new Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => fresh.destroy());
  await until('a new connection reaches the replacement', async () => {
    const answer = await call(gateway.origin, new Agent({ keepAlive: false }));
    return answer.body.result === '0x7a69' && (socketOwner(gateway.port, answer.localPort, [replacement]) === replacement || (await call(gateway.origin, fresh)).body.result === '0x7a69');
  }, 60_000);

  // One /metrics for the group: calls summed over the workers, process figures per worker, the restart counted.
  const text = await metricsText(gateway.origin);
  const total = loops.reduce((sum, loop) => sum + loop.ok, 0);
  const counted = Number(/^tollgate_calls_total\{network="eth",method="eth_chainId",status="ok"\} (\d+)$/m.exec(text)?.[1]);
  // The killed worker's own counts die with it: the group's total is what the living workers answered.
  t.ok(counted > 0 && counted <= total + 10, `tollgate_calls_total (${counted}) counts the living workers' answers (at most ${total} and the probes)`);
  t.match(text, /^tollgate_worker_restarts_total 1$/m, 'one restart');
  t.match(text, /^tollgate_workers\{state="serving"\} 2$/m, 'two workers serving');
  t.match(text, /^process_cpu_user_seconds_total\{worker="1"\} /m, 'worker 1\'s CPU');
  t.match(text, /^process_cpu_user_seconds_total\{worker="2"\} /m, 'worker 2\'s CPU');
  const ready = await fetch(`${gateway.origin}/readyz`);
  t.equal(ready.status, 200);
  t.match(await ready.json(), { ready: true, group: '2/2 workers serving' });

  gateway.child.kill('SIGTERM');
  t.equal(await gateway.exited, 0, 'SIGTERM stops the group cleanly');
});

