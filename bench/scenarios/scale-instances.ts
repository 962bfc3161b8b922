/**
 * Scale, instance half: 1, 2 and 3 gateway instances (separate processes, each the full gateway of
 * `bench/servers/ledger-gateway.ts`) sharing one Redis Cluster of three masters, the load generator's
 * connections spread over the instances in turn. Beside req/s and the gateways' CPU per call, each target
 * reports what the fleet costs Redis: commands and CPU per call, summed over the masters (INFO
 * commandstats and INFO cpu, read right before and after every measurement).
 */
import { BENCH_KEY, BENCH_NETWORK } from '../config.js';
import { startAnvil } from '@tollgate/devnet';
import { Redis } from 'ioredis';
import { runTargets, startServer, type BenchOptions, type TargetDefinition } from '../lib/harness.js';
import type { ServerHandle } from '../lib/processes.js';
import { anvilReadTargets, describeMix, mixRequest } from '../lib/real-call-mix.js';
import type { Scenario } from '../lib/scenario.js';
import { startRedisCluster } from '../../scripts/lib/redis-cluster.js';

/** The per-call columns this scenario adds to the table (counter names of {@link redisCounters}). */
const COLUMNS = { commands: 'Redis cmd/call', scripts: 'Redis scripts/call', cpu: 'Redis CPU us/call' } as const;

/** Commands Redis counts that are the bench's own reading, not the gateways' work. */
const OWN_COMMANDS = new Set(['info']);

/** Script calls among the commands (Redis also counts each command a script runs, under its own name). */
const SCRIPT_COMMANDS = new Set(['eval', 'evalsha', 'eval_ro', 'evalsha_ro', 'fcall', 'fcall_ro']);

/** What one master has done since it started: calls by command (the bench's INFO left out), CPU µs. */
function parseInfo(text: string): { byCommand: Map<string, number>; cpuMicros: number } {
  const byCommand = new Map<string, number>();
  for (const [, name, calls] of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    if (!OWN_COMMANDS.has(name!)) byCommand.set(name!, Number(calls));
  }
  const seconds = (field: string): number => Number(new RegExp(`^${field}:([\\d.]+)`, 'm').exec(text)?.[1] ?? NaN);
  return { byCommand, cpuMicros: (seconds('used_cpu_sys') + seconds('used_cpu_user')) * 1e6 };
}

/** Cumulative figures of the masters, summed. */
interface RedisReading {
  /** Calls by command name. */
  readonly byCommand: ReadonlyMap<string, number>;
  /** CPU µs. */
  readonly cpuMicros: number;
}

/** The table's counters of a reading. */
function columns(reading: RedisReading): Record<string, number> {
  let commands = 0;
  let scripts = 0;
  for (const [name, calls] of reading.byCommand) {
    commands += calls;
    if (SCRIPT_COMMANDS.has(name)) scripts += calls;
  }
  return { [COLUMNS.commands]: commands, [COLUMNS.scripts]: scripts, [COLUMNS.cpu]: reading.cpuMicros };
}

/**
 * Cumulative counters of the cluster's masters, summed: one plain connection per master, kept open so
 * that reading adds nothing but its own INFO (left out of the command count; its CPU is a few µs a read).
 */
async function redisCounters(ports: readonly number[]): Promise<{ read(): Promise<RedisReading>; close(): void }> {
  const clients = ports.map((port) => new Redis({ host: '127.0.0.1', port, lazyConnect: true, enableReadyCheck: false, maxRetriesPerRequest: 0 }));
  try {
    await Promise.all(clients.map((client) => client.connect()));
  } catch (error) {
    clients.forEach((client) => client.disconnect());
    throw error;
  }
  return {
    async read() {
      const infos = await Promise.all(clients.map(async (client) => parseInfo(String(await client.call('info', 'commandstats', 'cpu')))));
      const byCommand = new Map<string, number>();
      for (const info of infos) for (const [name, calls] of info.byCommand) byCommand.set(name, (byCommand.get(name) ?? 0) + calls);
      return { byCommand, cpuMicros: infos.reduce((sum, i) => sum + i.cpuMicros, 0) };
    },
    close: () => clients.forEach((client) => client.disconnect()),
  };
}

const scenario: Scenario = {
  name: 'scale-instances',
  description: '1, 2 and 3 gateway instances sharing one Redis Cluster of three masters: req/s, and gateway and Redis cost per call',
  targets: ['instances-1', 'instances-2', 'instances-3'],

  async run(options: BenchOptions) {
    const anvil = await startAnvil();
    let cluster: Awaited<ReturnType<typeof startRedisCluster>> | undefined;
    let counters: Awaited<ReturnType<typeof redisCounters>> | undefined;
    try {
      // Masters only: replicas would add replication traffic to the masters' CPU, not what a call costs.
      cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 0 });
      const masters = (await cluster.masters()).map((m) => m.node);
      counters = await redisCounters(masters.map((node) => node.port));
      const read = counters.read;
      // Calls by command during a target's measurements, for the notes: the harness reads a target's
      // counters twice per measurement, before then after, so readings alternate.
      const measuredCommands = new Map<string, { calls: Map<string, number>; answers: number; before?: RedisReading }>();
      const countersOf = (name: string) => async (): Promise<Record<string, number>> => {
        const reading = await read();
        const entry = measuredCommands.get(name) ?? { calls: new Map<string, number>(), answers: 0 };
        measuredCommands.set(name, entry);
        if (entry.before === undefined) entry.before = reading;
        else {
          for (const [command, calls] of reading.byCommand) {
            const grown = calls - (entry.before.byCommand.get(command) ?? 0);
            if (grown > 0) entry.calls.set(command, (entry.calls.get(command) ?? 0) + grown);
          }
          delete entry.before;
        }
        return columns(reading);
      };
      const seeds = cluster.seeds;
      const path = `/${BENCH_NETWORK}/v3/${BENCH_KEY}`;
      const request = mixRequest({ evm: path }, await anvilReadTargets(anvil.url));
      const target = (instances: number): TargetDefinition => ({
        name: `instances-${instances}`,
        description: `${instances} gateway instance${instances === 1 ? '' : 's'}, ledger-redis on the Redis Cluster`,
        async start() {
          const servers: ServerHandle[] = [];
          // One after the other: parallel start-ups would fight for the cores.
          try {
            for (let i = 1; i <= instances; i++) {
              servers.push(await startServer(`instances-${instances}.${i}`, 'bench/servers/ledger-gateway.ts', { upstream: anvil.url, ledger: 'redis-cluster', cluster: seeds }, options));
            }
          } catch (error) {
            await Promise.all(servers.map((server) => server.stop()));
            throw error;
          }
          const [first, ...more] = servers;
          return {
            url: first!.url,
            urls: servers.map((server) => server.url),
            request,
            serverPids: servers.flatMap((server) => server.ready.pids),
            server: first!,
            moreServers: more,
            counters: countersOf(`instances-${instances}`),
          };
        },
      });
      const outcome = await runTargets(
        [target(1), target(2), target(3)],
        [
          { numerator: 'instances-2', denominator: 'instances-1' },
          { numerator: 'instances-3', denominator: 'instances-1' },
        ],
        options,
        [anvil.pid, ...cluster.nodes.flatMap((node) => (node.pid === undefined ? [] : [node.pid]))],
      );
      const byCommand = outcome.targets.map((report) => {
        const answers = report.rounds.reduce((sum, r) => sum + r.ok, 0);
        const calls = [...(measuredCommands.get(report.name)?.calls ?? new Map<string, number>())].sort((a, b) => b[1] - a[1]);
        return `${report.name}: ${calls.map(([command, n]) => `${command} ${(n / answers).toFixed(3)}`).join(', ') || 'none'}`;
      });
      return {
        scenario: scenario.name,
        description: scenario.description,
        ...outcome,
        notes: [
          `calls: ${describeMix(false)}, to ${path}; one key, so every instance takes from the same balance and bucket in the cluster`,
          `instances: bench/servers/ledger-gateway.ts processes with ledger-redis { cluster: { nodes: [${seeds}] } }; the load generator's ${options.connections} connections go to them in turn; server CPU is the sum over the instances`,
          `Redis: a cluster of ${masters.length} masters without replicas (${masters.map((node) => node.address).join(', ')}); its CPU is counted with the upstream's`,
          `${COLUMNS.commands}: INFO commandstats calls summed over the masters (commands a script runs included, the bench's own INFO left out), growth during the measurement / correct answers; ${COLUMNS.scripts}: the EVAL/EVALSHA/FCALL among them; ${COLUMNS.cpu}: used_cpu_sys + used_cpu_user summed over the masters, growth / correct answers (cluster bus upkeep included)`,
          `Redis calls per answer by command, over all measurements: ${byCommand.join('; ')}`,
        ],
      };
    } finally {
      counters?.close();
      await cluster?.stop();
      await anvil.stop();
    }
  },
};

export default scenario;
