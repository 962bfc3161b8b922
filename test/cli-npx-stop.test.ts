/**
 * `SIGTERM` to `npx tollgate start` stops the gateway: npm exits on the signal without passing it on,
 * and the gateway, noticing that the process that started it is gone, drains and stops as on SIGTERM
 * rather than serving on as an orphan. Run through a real `npx`, in a project whose `tollgate` command
 * runs this repository's sources.
 */
import { userEnv as userEnvOf } from './helpers/user-env.js';
import t from 'tap';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServing } from './helpers/example-process.js';
import { post, rpc } from './helpers/json-rpc.js';
import { alive, childProcesses } from './helpers/processes.js';
import { startTinyUpstream } from './helpers/tiny-upstream.js';
import { until } from './helpers/until.js';

const project = await mkdtemp(join(tmpdir(), 'tollgate-npx-stop-'));
t.teardown(() => rm(project, { recursive: true, force: true }));
const upstream = await startTinyUpstream();
t.teardown(() => upstream.close());

// The project's `tollgate` command, as npm links an installed package's bin into node_modules/.bin: here
// it runs the sources (through tsx, by its own address) instead of the build.
const main = new URL('../examples/gateway/main.ts', import.meta.url).pathname;
await mkdir(join(project, 'node_modules', '.bin'), { recursive: true });
await writeFile(join(project, 'package.json'), '{ "name": "operator", "private": true, "type": "module" }\n');
await mkdir(join(project, 'node_modules', 'tollgate'), { recursive: true });
await writeFile(join(project, 'node_modules', 'tollgate', 'tollgate.mjs'), `#!/usr/bin/env -S node --conditions=tollgate-source --import=${import.meta.resolve('tsx')}\nawait import(${JSON.stringify(main)});\n`, { mode: 0o755 });
await symlink('../tollgate/tollgate.mjs', join(project, 'node_modules', '.bin', 'tollgate'));
await writeFile(join(project, 'gateway.yaml'), `keys:\n  - { key: npx-stop-key-0001, plan: growth }\nnetworks:\n  - name: eth\n    families: [evm]\n    upstreams:\n      - url: ${upstream.url}\n`);

/** Whether `pid` runs (an exited process its new parent has not reaped yet does not). */
function running(pid: number): boolean {
  if (!alive(pid)) return false;
  try {
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').startsWith('Z');
  } catch {
    return false;
  }
}

/** Every process below `pid`, depth first. */
function descendants(pid: number): Array<{ pid: number; command: string }> {
  return childProcesses(pid).flatMap((child) => [child, ...descendants(child.pid)]);
}

t.test('SIGTERM to npx tollgate start drains and stops the gateway', async (t) => {
  const env = userEnvOf();
  const npx = await startServing('npx tollgate start', project, 'npx', ['--no-install', 'tollgate', 'start', '--config', 'gateway.yaml', '--data-dir', join(project, 'data')], { ...env, NODE_OPTIONS: '' });
  const gateway = descendants(npx.child.pid!).find((p) => p.command === 'node');
  t.ok(gateway, 'the gateway runs as a child process of npx');
  t.teardown(() => { if (gateway !== undefined && running(gateway.pid)) process.kill(gateway.pid, 'SIGKILL'); });
  const url = `${npx.origin}/eth/v3/npx-stop-key-0001`;
  t.equal((await post(url, rpc('eth_chainId', []))).status, 200, 'it serves');

  npx.child.kill('SIGTERM');
  await until('the gateway has exited', () => !running(gateway!.pid), 30_000);
  await t.rejects(fetch(url, { method: 'POST', body: '{}' }), 'nothing answers after the signal');
  t.match(npx.output(), /"signal":"parent exited","msg":"shutting down"/, 'it drained as on SIGTERM');
});
