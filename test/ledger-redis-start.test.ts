import t, { type Test } from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { freePort, startAnvil } from '@tollgate/devnet';
import type { GatewayConfigInput } from '../core/index.js';
import { startRedisServer, type RedisServer } from './helpers/redis-server.js';
import { TSX_NODE_ARGS } from './helpers/tsx-node-args.js';
import { until } from './helpers/until.js';

// `tollgate start` compiles its sources with tsx at start: slow on a loaded machine.
t.setTimeout(300_000);

const main = fileURLToPath(new URL('../examples/gateway/main.ts', import.meta.url));
const KEY = 'start-while-redis-converges-key-0001';

const anvil = await startAnvil();
t.teardown(() => anvil.stop());

/** `tollgate start` on a fixed free port against `redisUrl`, its output collected; killed at the end of `t`. */
async function startCli(t: Test, redisUrl: string, args: readonly string[]): Promise<{ child: ChildProcess; origin: string; output: () => string }> {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-redis-start-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const config: GatewayConfigInput = {
    networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: anvil.url }] }],
    plans: { starter: { dailyCredits: 1_000_000, creditsPerSecond: 1_000_000, failover: false } },
    keys: [{ key: KEY, id: 'starter', plan: 'starter' }],
    // Each wait short, the whole start bounded by minutes: the test sees several retries quickly.
    plugins: { 'ledger-redis': { url: redisUrl, connectTimeoutMs: 300, startTimeoutMs: 120_000 } },
  };
  const file = join(dir, 'gateway.json');
  writeFileSync(file, JSON.stringify(config));
  const port = await freePort();
  const child = spawn(process.execPath, [...TSX_NODE_ARGS, main, 'start', '--config', file, '--port', String(port), '--host', '127.0.0.1', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  return { child, origin: `http://127.0.0.1:${port}`, output: () => output };
}

/** `/readyz`'s status, or `refused` while nothing listens. */
async function readiness(origin: string): Promise<number | 'refused'> {
  try {
    return (await fetch(`${origin}/readyz`)).status;
  } catch {
    return 'refused';
  }
}

async function blockNumber(origin: string): Promise<{ status: number; body: { result?: string; error?: unknown } }> {
  const response = await fetch(`${origin}/eth/v3/${KEY}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }) });
  return { status: response.status, body: (await response.json()) as { result?: string } };
}

t.test('a gateway started before its Redis keeps trying, is not ready meanwhile, then serves once Redis comes', async (t) => {
  // Nothing listens on this port yet: Redis comes later, on it.
  const redisPort = await freePort();
  const gateway = await startCli(t, `redis://127.0.0.1:${redisPort}`, []);
  // Several waits of connectTimeoutMs logged: the old start gave up after the first one.
  await until('the gateway to wait for Redis twice', () => (gateway.output().match(/waiting for Redis at start/g) ?? []).length >= 2 || gateway.child.exitCode !== null, 120_000, 50);
  t.equal(gateway.child.exitCode, null, `the gateway is still starting: ${gateway.output().slice(-1500)}`);
  if (gateway.child.exitCode !== null) return;
  t.equal(await readiness(gateway.origin), 'refused', 'not ready: it does not take calls before its store is there');

  const redis: RedisServer = await startRedisServer(['--port', String(redisPort)]);
  t.teardown(() => redis.stop());
  await until('the gateway to be ready', async () => (await readiness(gateway.origin)) === 200 || gateway.child.exitCode !== null, 120_000, 100);
  t.equal(await readiness(gateway.origin), 200, gateway.output().slice(-1500));
  const call = await blockNumber(gateway.origin);
  t.equal(call.status, 200);
  t.match(call.body, { result: /^0x[0-9a-f]+$/ }, 'it serves, metered by the Redis that came late');
});

t.test('workers whose key and plan subscriptions are refused for a while keep trying, then serve with their subscriptions live', async (t) => {
  const redis = await startRedisServer();
  t.teardown(() => redis.stop());
  const admin = new Redis(redis.port, '127.0.0.1');
  t.teardown(() => admin.quit());
  // Only the heads' channel is allowed: SUBSCRIBE to key and plan changes is refused (NOPERM), as a
  // Cluster's node that is not serving yet refuses it, while every command works.
  await admin.call('ACL', 'SETUSER', 'default', 'resetchannels', '&tollgate:heads');
  const gateway = await startCli(t, redis.url, ['--workers', '2']);
  // Refused subscriptions are recorded in Redis's ACL log: two refusals or more mean a retry.
  // (Repeated refusals are one entry with a count.)
  const refusals = async (): Promise<number> => ((await admin.call('ACL', 'LOG')) as unknown[][])
    .filter((entry) => String(entry[entry.indexOf('object') + 1]).endsWith('changed'))
    .reduce((sum: number, entry) => sum + Number(entry[entry.indexOf('count') + 1]), 0);
  await until('the subscriptions to be retried', async () => (await refusals()) >= 4 || gateway.child.exitCode !== null, 120_000, 50);
  t.equal(gateway.child.exitCode, null, `the workers are still starting: ${gateway.output().slice(-1500)}`);
  if (gateway.child.exitCode !== null) return;
  t.not(await readiness(gateway.origin), 200, 'not ready while the subscriptions are not in place');

  await admin.call('ACL', 'SETUSER', 'default', 'allchannels');
  await until('both workers to serve', async () => {
    if (gateway.child.exitCode !== null) return true;
    const response = await fetch(`${gateway.origin}/readyz`).catch(() => undefined);
    return response !== undefined && ((await response.json()) as { group?: string }).group === '2/2 workers serving';
  }, 120_000, 100);
  const ready = await fetch(`${gateway.origin}/readyz`);
  t.equal(ready.status, 200, gateway.output().slice(-1500));
  t.match(await ready.json(), { ready: true, store: 'ok', group: '2/2 workers serving' });
  const call = await blockNumber(gateway.origin);
  t.equal(call.status, 200);
  t.match(call.body, { result: /^0x[0-9a-f]+$/ });
  // The subscriptions are live in both workers: each listens to key and plan changes.
  const subscribers = (await admin.call('PUBSUB', 'NUMSUB', 'tollgate:keys:changed', 'tollgate:plans:changed')) as Array<string | number>;
  t.same(subscribers, ['tollgate:keys:changed', 2, 'tollgate:plans:changed', 2], 'two workers subscribed to each channel');
});
