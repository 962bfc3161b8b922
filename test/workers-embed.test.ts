import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startAnvil } from '@tollgate/devnet';
import { childProcesses } from './helpers/processes.js';
import { TSX_NODE_ARGS } from './helpers/tsx-node-args.js';
import { until } from './helpers/until.js';

// The recipe runs a gateway per core under tsx: slow on a loaded machine.
t.setTimeout(300_000);

const readme = fileURLToPath(new URL('../plugins/workers/README.md', import.meta.url));

t.test('the README\'s recipe for a server of one\'s own on several workers serves, aggregates and drains', async (t) => {
  const block = /## Your own server on several workers\n\n```ts\n([\s\S]*?)```/.exec(readFileSync(readme, 'utf8'))?.[1];
  t.ok(block, 'the README has the recipe');
  const anvil = await startAnvil();
  t.teardown(() => anvil.stop());
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-recipe-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const port = await freePort();
  // The recipe as written, with a free port, a real node and a temporary folder in place of its placeholders.
  const source = block!
    .replace('port: 8545', `port: ${port}`)
    .replace('http://127.0.0.1:8546', anvil.url)
    .replace("'data/tollgate.db'", JSON.stringify(join(dir, 'tollgate.db')));
  t.not(source, block, 'the placeholders were found');
  // Inside the repository, so that `tollgate` resolves to this package as it would once installed.
  const file = fileURLToPath(new URL(`./.workers-recipe-${process.pid}.ts`, import.meta.url));
  writeFileSync(file, source);
  t.teardown(() => rmSync(file, { force: true }));
  const child = spawn(process.execPath, [...TSX_NODE_ARGS, file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.teardown(async () => {
    for (const worker of childProcesses(child.pid!)) process.kill(worker.pid, 'SIGKILL');
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  const origin = `http://127.0.0.1:${port}`;
  await until('the group serves', async () => {
    if (child.exitCode !== null) throw new Error(`the recipe exited: ${output}`);
    try {
      return (await fetch(`${origin}/readyz`)).status === 200;
    } catch {
      return false;
    }
  }, 120_000, 200);
  const workers = childProcesses(child.pid!).filter((c) => c.command === 'node');
  t.ok(workers.length >= 1, `the primary runs its workers (${workers.length})`);
  // /readyz is answered by whichever worker takes the connection: the first one serving answers it while
  // the others may still be starting. The group's own gauge says when every one serves.
  const everyWorkerServes = new RegExp(`^tollgate_workers\\{state="serving"\\} ${workers.length}$`, 'm');
  await until('every worker serves', async () => everyWorkerServes.test(await (await fetch(`${origin}/metrics`)).text()), 120_000, 200);
  for (let i = 0; i < 6; i++) {
    const res = await fetch(`${origin}/eth/v3/my-api-key-123`, { method: 'POST', headers: { 'content-type': 'application/json', connection: 'close' }, body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'eth_chainId', params: [] }) });
    t.same(await res.json(), { jsonrpc: '2.0', id: i, result: '0x7a69' });
  }
  const text = await (await fetch(`${origin}/metrics`)).text();
  t.match(text, /^tollgate_calls_total\{network="eth",method="eth_chainId",status="ok"\} 6$/m, 'one /metrics counts every worker\'s calls');
  t.match(text, everyWorkerServes, 'every worker still serves after the calls');
  child.kill('SIGTERM');
  const code = await exited;
  t.equal(code, 0, 'SIGTERM drains the group and exits 0', code === 0 ? {} : { output });
});
