/**
 * Scale, worker half: the same call through the full gateway (SQLite store) with 1 and 2 worker
 * processes under `superviseWorkers`, 2 workers with the kernel rather than the primary picking the
 * worker (`node:cluster` SCHED_NONE), and 1 and 2 workers on a Redis store, as ratios to 1 worker. On a 2-core machine the load generator
 * shares the cores: the notes give each worker's share of the CPU, read from the group's /metrics.
 * The instance half (1 to 3 gateways on one Redis Cluster) is `scale-instances.ts`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BENCH_KEY, BENCH_NETWORK } from '../config.js';
import { startAnvil } from '@tollgate/devnet';
import { runTargets, startServer, type BenchOptions, type TargetDefinition } from '../lib/harness.js';
import { checkBenchMethod, jsonRpcRequest } from '../lib/json-rpc-request.js';
import type { Scenario } from '../lib/scenario.js';
import { startRedis } from './ledgers.js';

/** Each worker's CPU seconds (user + system), from the group's /metrics. */
async function workerCpu(url: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const cpu: Record<string, number> = {};
  for (const [, worker, seconds] of text.matchAll(/^process_cpu_seconds_total\{worker="(\d+)"\} ([\d.e+-]+)$/gm)) cpu[worker!] = Number(seconds);
  return cpu;
}

const scenario: Scenario = {
  name: 'scale',
  description: 'the full gateway (SQLite or Redis store) on 1 and 2 worker processes, as ratios to 1 worker',
  targets: ['workers-1', 'workers-2', 'workers-2-os', 'workers-1-redis', 'workers-2-redis'],

  async run(options: BenchOptions) {
    checkBenchMethod(options.method);
    const anvil = await startAnvil();
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-scale-'));
    const wantsRedis = options.targets === undefined || options.targets.some((name) => name.endsWith('-redis'));
    const redis = wantsRedis ? await startRedis() : undefined;
    const urls = new Map<string, string>();
    try {
      const path = `/${BENCH_NETWORK}/v3/${BENCH_KEY}`;
      const target = (name: string, description: string, workers: number, scheduling: string, store: 'sqlite' | 'redis' = 'sqlite'): TargetDefinition => ({
        name,
        description,
        async start() {
          const where: Record<string, string> = store === 'redis' ? { redis: redis!.url } : { sqlite: join(dir, `${name}.db`) };
          const server = await startServer(name, 'bench/servers/workers-gateway.ts', { upstream: anvil.url, ...where, workers: String(workers), scheduling }, options);
          urls.set(name, server.url);
          return { url: server.url, request: jsonRpcRequest(options.method, path), serverPids: server.ready.pids, server };
        },
      });
      const definitions: TargetDefinition[] = [
        target('workers-1', 'one worker under the supervisor', 1, 'round-robin'),
        target('workers-2', 'two workers, node:cluster round robin (the default)', 2, 'round-robin'),
        target('workers-2-os', 'two workers, the kernel picks the worker (SCHED_NONE)', 2, 'os'),
        target('workers-1-redis', 'one worker, Redis store', 1, 'round-robin', 'redis'),
        target('workers-2-redis', 'two workers, Redis store', 2, 'round-robin', 'redis'),
      ];
      const shares: string[] = [];
      const outcome = await runTargets(
        definitions,
        [
          { numerator: 'workers-2', denominator: 'workers-1', goal: 1 },
          { numerator: 'workers-2-os', denominator: 'workers-2', goal: 0 },
          { numerator: 'workers-2-redis', denominator: 'workers-1-redis', goal: 1 },
        ],
        options,
        [anvil.pid, ...(redis === undefined ? [] : [redis.pid])],
        async (name: string) => {
          const url = urls.get(name);
          if (url === undefined) return;
          const cpu = await workerCpu(url);
          const total = Object.values(cpu).reduce((a, b) => a + b, 0);
          shares.push(`${name}: ${Object.entries(cpu).map(([w, s]) => `worker ${w} ${s.toFixed(1)} s (${((100 * s) / total).toFixed(0)} %)`).join(', ')}`);
        },
      );
      return {
        scenario: scenario.name,
        description: scenario.description,
        ...outcome,
        notes: [
          `request: POST ${options.method} to ${path} with the key's balance, bucket and usage in one SQLite file shared by the workers (or one redis-server, for the -redis targets, its CPU counted with the upstream's)`,
          `upstream: one Anvil (${anvil.url}); the primary's CPU is counted with its workers'`,
          `CPU per worker since start (priming and warm-up included): ${shares.join('; ') || 'not read'}`,
        ],
      };
    } finally {
      await redis?.stop();
      await anvil.stop();
      // A worker of a target that failed to start may still be closing its database.
      rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
    }
  },
};

export default scenario;
