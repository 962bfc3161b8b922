/**
 * Ledgers: the same single call through the full gateway pipeline, with the key's balance, throughput
 * bucket and usage kept in memory (the core's default), in SQLite (a debit committed before dispatch) and
 * in Redis (atomic Lua scripts, a key's calls of one event-loop turn in one script). Ratios are to the
 * memory ledger. Redis commands per call come from Redis's own INFO commandstats, divided by the calls
 * the gateway recorded in its usage counters (every call it served, priming and warm-ups included).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { BENCH_KEY, BENCH_NETWORK } from '../config.js';
import { freePort, startAnvil } from '@tollgate/devnet';
import { runTargets, startServer, type BenchOptions, type TargetDefinition } from '../lib/harness.js';
import { exitOf, spawnChild } from '../lib/processes.js';
import { anvilReadTargets, describeMix, mixRequest } from '../lib/real-call-mix.js';
import type { Scenario } from '../lib/scenario.js';
import { Redis } from 'ioredis';

/**
 * Redis commands per call served: INFO commandstats, read first (so this reading's own commands are not
 * in it), divided by the calls in the gateway's usage hashes under `prefix` (`<prefix>usage:<day>:{<key
 * id>}`, fields `<network>|<method>|calls`). `info` is left out: ioredis's ready check sends it on every
 * connect, this reading once.
 */
async function commandsPerCall(url: string, prefix: string): Promise<{ commands: number; scripts: number; calls: number; byCommand: string }> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, enableReadyCheck: false });
  await client.connect();
  try {
    const stats = await client.info('commandstats');
    let calls = 0;
    for (const name of await client.keys(`${prefix}usage:*`)) {
      for (const [field, value] of Object.entries(await client.hgetall(name))) if (field.endsWith('|calls')) calls += Number(value);
    }
    const counted: Array<[string, number]> = [...stats.matchAll(/^cmdstat_([a-z|_-]+):calls=(\d+)/gm)].map((m) => [m[1]!, Number(m[2])]);
    const gateway = counted.filter(([name]) => name !== 'info').sort(([, a], [, b]) => b - a);
    // Redis counts the commands a script runs as well as the script itself: both are reported.
    const commands = gateway.reduce((sum, [, n]) => sum + n, 0);
    const scripts = gateway.filter(([name]) => name === 'eval' || name === 'evalsha').reduce((sum, [, n]) => sum + n, 0);
    return { commands, scripts, calls, byCommand: gateway.map(([name, n]) => `${name} ${n}`).join(', ') };
  } finally {
    client.disconnect();
  }
}

/** A `redis-server` without persistence on a free port, as a tracked child of the bench. */
export async function startRedis(): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawnChild('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('redis-server did not get ready')), 20_000);
    child.once('error', (error) => { clearTimeout(timer); reject(new Error(`cannot start redis-server (apt-get install redis-server): ${error.message}`)); });
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`redis-server exited with ${code}`)); });
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (/ready to accept/i.test(line)) { clearTimeout(timer); resolve(); }
    });
  });
  child.removeAllListeners('exit');
  return {
    url: `redis://127.0.0.1:${port}`,
    pid: child.pid!,
    async stop() {
      child.kill('SIGTERM');
      await exitOf(child);
    },
  };
}

const scenario: Scenario = {
  name: 'ledgers',
  description: 'the full gateway pipeline with the memory, SQLite and Redis ledgers, as ratios to memory',
  targets: ['memory', 'sqlite', 'redis', 'redis-before'],

  async run(options: BenchOptions) {
    const wanted = (name: string): boolean => options.targets === undefined || options.targets.includes(name);
    if (options.baseline === undefined && options.targets?.includes('redis-before') === true) throw new Error('the redis-before target needs --baseline <dir>');
    const anvil = await startAnvil();
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-ledgers-'));
    const redis = wanted('redis') ? await startRedis() : undefined;
    // The baseline's gateway gets a Redis of its own, so each one's commands per call are its own.
    const redisBefore = options.baseline !== undefined && wanted('redis-before') ? await startRedis() : undefined;
    try {
      const path = `/${BENCH_NETWORK}/v3/${BENCH_KEY}`;
      const request = mixRequest({ evm: path }, await anvilReadTargets(anvil.url));
      const gateway = (name: string, description: string, args: Record<string, string>, cwd?: string): TargetDefinition => ({
        name,
        description,
        async start() {
          const server = await startServer(name, 'bench/servers/ledger-gateway.ts', { upstream: anvil.url, ...args }, options, cwd);
          return { url: server.url, request, serverPids: server.ready.pids, server };
        },
      });
      const definitions: TargetDefinition[] = [
        gateway('memory', 'gateway, balances and buckets in process memory (the core default)', { ledger: 'memory' }),
        gateway('sqlite', 'gateway, ledger-sqlite: WAL, group commit before dispatch', { ledger: 'sqlite', sqlite: join(dir, 'bench.db') }),
        gateway('redis', 'gateway, ledger-redis: Lua scripts, auto-pipelined', { ledger: 'redis', redis: redis?.url ?? 'redis://127.0.0.1:6379' }),
        ...(options.baseline === undefined
          ? []
          : [gateway('redis-before', `the same Redis gateway built from ${options.baseline}`, { ledger: 'redis', redis: redisBefore?.url ?? 'redis://127.0.0.1:6379' }, options.baseline)]),
      ];
      const outcome = await runTargets(
        definitions,
        [
          { numerator: 'sqlite', denominator: 'memory', goal: 0.97 },
          { numerator: 'redis', denominator: 'memory', goal: 0.95 },
          ...(options.baseline === undefined ? [] : [{ numerator: 'redis', denominator: 'redis-before' }]),
        ],
        options,
        [anvil.pid, ...[redis, redisBefore].flatMap((r) => (r === undefined ? [] : [r.pid]))],
      );
      const perCall = (name: string, perCall: Awaited<ReturnType<typeof commandsPerCall>> | undefined): string[] =>
        perCall === undefined
          ? []
          : perCall.calls === 0
          ? [`${name}: Redis per call served unknown, no calls found in the usage hashes (${perCall.byCommand})`]
          : [`${name}: Redis per call served: ${(perCall.scripts / perCall.calls).toFixed(3)} scripts, ${(perCall.commands / perCall.calls).toFixed(3)} commands run in all (INFO commandstats, script bodies included: ${perCall.byCommand}; ${perCall.calls} calls)`];
      const counted = redis === undefined ? undefined : await commandsPerCall(redis.url, 'bench:');
      const countedBefore = redisBefore === undefined ? undefined : await commandsPerCall(redisBefore.url, 'bench:');
      return {
        scenario: scenario.name,
        description: scenario.description,
        ...outcome,
        notes: [
          `calls: ${describeMix(false)}, to ${path}; every call takes from the key's throughput bucket and daily balance and records usage`,
          `upstream: one Anvil (${anvil.url}); Redis: one redis-server without persistence${redis === undefined ? '' : ` (${redis.url})`}, its CPU counted with the upstream's`,
          'SQLite: one file in a temporary folder, synchronous=NORMAL (a committed debit survives kill -9)',
          ...perCall('redis', counted),
          ...perCall('redis-before', countedBefore),
        ],
      };
    } finally {
      await redis?.stop();
      await redisBefore?.stop();
      await anvil.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

export default scenario;
