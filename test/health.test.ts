/**
 * `/healthz` and `/readyz` of the `tollgate` command, end to end: a network on two Anvils; readiness
 * goes false when both are down and true again when one is back, while liveness stays true.
 */
import t from 'tap';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startAnvil, type AnvilInstance } from '@tollgate/devnet';
import { startServing } from './helpers/example-process.js';
import { TSX_NODE_ARGS } from './helpers/tsx-node-args.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const dir = await mkdtemp(join(tmpdir(), 'tollgate-health-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));

let a: AnvilInstance | undefined = await startAnvil();
let b: AnvilInstance | undefined = await startAnvil();
t.teardown(async () => { await a?.stop(); await b?.stop(); });
const portB = Number(new URL(b.url).port);
const config = join(dir, 'gateway.yaml');
await writeFile(config, `networks:\n  - name: eth\n    families: [evm]\n    upstreams:\n      - url: ${a.url}\n      - url: ${b.url}\n`);
const gateway = await startServing('tollgate start', root, process.execPath, [...TSX_NODE_ARGS, 'examples/gateway/main.ts', 'start', '--config', config, '--data-dir', dir, '--log-level', 'silent'], { TOLLGATE_ADMIN_TOKEN: '', TOLLGATE_REDIS_URL: '' });
t.teardown(() => gateway.stop());

async function probe(path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${gateway.origin}${path}`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

t.test('both nodes up: alive and ready', async (t) => {
  t.same(await probe('/healthz'), { status: 200, body: { status: 'ok' } });
  t.same(await probe('/readyz'), { status: 200, body: { ready: true, store: 'ok', networks: { eth: 'ok' } } });
});

t.test('one node down: still ready, the other serves', async (t) => {
  await a!.stop();
  a = undefined;
  t.same((await probe('/readyz')).status, 200);
});

t.test('every node down: alive, not ready, naming the network', async (t) => {
  await b!.stop();
  b = undefined;
  const ready = await probe('/readyz');
  t.equal(ready.status, 503);
  t.equal(ready.body.ready, false);
  t.match(ready.body.networks, { eth: /^no node answers/ });
  t.equal(ready.body.store, 'ok', 'the store still answers');
  t.same(await probe('/healthz'), { status: 200, body: { status: 'ok' } }, 'liveness does not depend on the nodes');
});

t.test('a node back: ready again', async (t) => {
  b = await startAnvil({ port: portB });
  t.same(await probe('/readyz'), { status: 200, body: { ready: true, store: 'ok', networks: { eth: 'ok' } } });
});

t.test('only GET and HEAD', async (t) => {
  const res = await fetch(`${gateway.origin}/readyz`, { method: 'POST' });
  t.equal(res.status, 405);
  const head = await fetch(`${gateway.origin}/healthz`, { method: 'HEAD' });
  t.equal(head.status, 200);
});
