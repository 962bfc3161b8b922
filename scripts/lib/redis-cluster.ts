/**
 * A real Redis Cluster on free loopback ports, for the tests (test/helpers/redis-cluster.ts) and the
 * bench (`scale-instances`) alike: several `redis-server --cluster-enabled yes` joined with
 * `redis-cli --cluster create`. Each node is guarded so that it does not outlive the process that started it.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { guardChild } from '../../packages/devnet/src/orphan-guard.js';
import { freePort } from '@tollgate/devnet';

const run = promisify(execFile);

/** Polls `condition` every `stepMs` until it holds; fails after `timeoutMs` with `what`. */
async function until(what: string, condition: () => boolean | Promise<boolean>, timeoutMs: number, stepMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, stepMs));
  }
}

/** One `redis-server --cluster-enabled yes` of a {@link RedisCluster}. */
export interface RedisClusterNode {
  /** Its client port (its cluster bus port is another free port). */
  readonly port: number;
  /** `127.0.0.1:<port>` */
  readonly address: string;
  /** Its pid while it runs. */
  readonly pid: number | undefined;
  /** Kills it with SIGKILL and waits until it is gone. */
  kill(): Promise<void>;
  /** SIGSTOP: its sockets stay open, nothing is answered. */
  pause(): void;
  /** SIGCONT after {@link RedisClusterNode.pause}. */
  resume(): void;
  /** Starts it again on the same ports and folder (it rejoins the cluster, empty, as a replica once failed over). */
  restart(): Promise<void>;
}

/** A Redis Cluster of real `redis-server` processes on free loopback ports, each with its own folder. */
export interface RedisCluster {
  /** Every node, in start order (the first `masters` were made masters by `--cluster create`). */
  readonly nodes: readonly RedisClusterNode[];
  /** Comma-separated `host:port` of every node: what `--redis-cluster` takes. */
  readonly seeds: string;
  /** The nodes that are masters now (asked of the cluster), each with the number of slots it serves. */
  masters(): Promise<Array<{ node: RedisClusterNode; slots: number }>>;
  /** Runs `redis-cli <args>` against `node` (default: the first reachable node) and returns its output. */
  cli(args: readonly string[], node?: RedisClusterNode): Promise<string>;
  /** Waits until every running node reports `cluster_state:ok` and sees `masters` masters serving all 16384 slots. */
  healthy(timeoutMs?: number): Promise<void>;
  /**
   * Moves `slots` slots from one master to another with `redis-cli --cluster reshard` (keys migrated with
   * MIGRATE, clients redirected with ASK then MOVED). Resolves when the command finished. Every node the
   * cluster knows must be running (restart a killed one first: it rejoins as a replica).
   */
  reshard(from: RedisClusterNode, to: RedisClusterNode, slots: number): Promise<void>;
  /** Stops every node and removes the folders. Idempotent. */
  stop(): Promise<void>;
}

/** Options of {@link startRedisCluster}. */
export interface RedisClusterOptions {
  /** Masters (default 3). */
  readonly masters?: number;
  /** Replicas per master (default 1). */
  readonly replicasPerMaster?: number;
  /** `cluster-node-timeout` in ms: how long a silent master is given before a replica takes over (default 1000). */
  readonly nodeTimeoutMs?: number;
}

function gone(child: ChildProcess | undefined): Promise<void> {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

function launch(port: number, busPort: number, dir: string, nodeTimeoutMs: number): Promise<ChildProcess> {
  const args = [
    '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no',
    '--cluster-enabled', 'yes', '--cluster-port', String(busPort), '--cluster-config-file', join(dir, 'nodes.conf'),
    '--cluster-node-timeout', String(nodeTimeoutMs), '--dir', dir,
    // A replica of a master that died takes over however long it was away from it.
    '--cluster-replica-validity-factor', '0',
  ];
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const guard = guardChild(child);
  child.once('exit', () => void guard.release());
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`redis-server (cluster node) did not get ready on port ${port}: ${output}`));
    }, 20_000);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (/ready to accept/i.test(output)) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        child.stdout!.resume();
        child.removeAllListeners('error');
        resolve(child);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server (cluster node) exited with ${code} before getting ready: ${output}`));
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

/** Two distinct free ports (client and cluster bus). */
async function portPair(): Promise<[number, number]> {
  for (;;) {
    const [a, b] = [await freePort(), await freePort()];
    if (a !== b) return [a, b];
  }
}

async function startNode(nodeTimeoutMs: number, root: string, index: number): Promise<RedisClusterNode> {
  const dir = join(root, `node-${index}`);
  let child: ChildProcess | undefined;
  let ports: [number, number] = [0, 0];
  for (let attempt = 1; child === undefined; attempt++) {
    ports = await portPair();
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    try {
      child = await launch(ports[0], ports[1], dir, nodeTimeoutMs);
    } catch (error) {
      if (attempt >= 3) throw error;
    }
  }
  const [port, busPort] = ports;
  let current: ChildProcess | undefined = child;
  const kill = async (): Promise<void> => {
    const dying = current;
    current = undefined;
    dying?.kill('SIGKILL');
    await gone(dying);
  };
  return {
    port,
    address: `127.0.0.1:${port}`,
    get pid() {
      return current?.pid;
    },
    kill,
    pause() {
      current?.kill('SIGSTOP');
    },
    resume() {
      current?.kill('SIGCONT');
    },
    async restart() {
      await kill();
      current = await launch(port, busPort, dir, nodeTimeoutMs);
    },
  };
}

/**
 * Starts a Redis Cluster: `masters × (1 + replicasPerMaster)` real `redis-server --cluster-enabled yes`
 * processes on free loopback ports (client and bus ports both picked free), joined with
 * `redis-cli --cluster create … --cluster-replicas N --cluster-yes`, and waits until every node reports
 * the cluster healthy. Call `stop()` when done (in a test, in `t.teardown`).
 *
 * @example
 * ```ts
 * const cluster = await startRedisCluster();
 * t.teardown(() => cluster.stop());
 * // tollgate start --redis-cluster ${cluster.seeds}
 * ```
 */
export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<RedisCluster> {
  const masters = options.masters ?? 3;
  const replicas = options.replicasPerMaster ?? 1;
  const nodeTimeoutMs = options.nodeTimeoutMs ?? 1000;
  const root = mkdtempSync(join(tmpdir(), 'tollgate-redis-cluster-'));
  const nodes: RedisClusterNode[] = [];
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await Promise.all(nodes.map((node) => node.kill()));
    rmSync(root, { recursive: true, force: true });
  };
  const cli = async (args: readonly string[], node?: RedisClusterNode): Promise<string> => {
    const targets = node === undefined ? nodes.filter((n) => n.pid !== undefined) : [node];
    let lastError: unknown;
    for (const target of targets) {
      try {
        const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(target.port), ...args], { timeout: 120_000, maxBuffer: 16 * 1024 * 1024 });
        return stdout;
      } catch (error) {
        lastError = error;
      }
    }
    throw lastError ?? new Error('no cluster node is running');
  };
  const mastersNow = async (): Promise<Array<{ node: RedisClusterNode; slots: number }>> => {
    const out: Array<{ node: RedisClusterNode; slots: number }> = [];
    for (const line of (await cli(['cluster', 'nodes'])).split('\n')) {
      const fields = line.trim().split(' ');
      if (fields.length < 8 || !fields[2]!.split(',').includes('master') || fields[2]!.includes('fail')) continue;
      const port = Number(fields[1]!.split('@')[0]!.split(':')[1]);
      const node = nodes.find((n) => n.port === port);
      if (node === undefined) continue;
      let slots = 0;
      for (const range of fields.slice(8)) {
        if (range.startsWith('[')) continue;
        const [a, b] = range.split('-').map(Number);
        slots += (b ?? a!) - a! + 1;
      }
      out.push({ node, slots });
    }
    return out;
  };
  const healthy = async (timeoutMs = 30_000): Promise<void> => {
    await until('the Redis Cluster is healthy', async () => {
      for (const node of nodes) {
        if (node.pid === undefined) continue;
        const info = await cli(['cluster', 'info'], node).catch(() => '');
        if (!info.includes('cluster_state:ok')) return false;
      }
      // A master just killed is still listed as serving until the others flag it: only running ones count.
      const serving = (await mastersNow().catch(() => [])).filter((m) => m.slots > 0 && m.node.pid !== undefined);
      return serving.length === masters && serving.reduce((sum, m) => sum + m.slots, 0) === 16384;
    }, timeoutMs, 100);
  };
  try {
    for (let i = 0; i < masters * (1 + replicas); i++) nodes.push(await startNode(nodeTimeoutMs, root, i));
    await cli(['--cluster', 'create', ...nodes.map((n) => n.address), '--cluster-replicas', String(replicas), '--cluster-yes'], nodes[0]);
    await healthy();
    // Every replica has finished its first sync, so a master killed now has a replica ready to take over.
    await until('every replica is in sync', async () => {
      for (const node of nodes) {
        const info = await cli(['info', 'replication'], node).catch(() => '');
        if (info.includes('role:slave') && !info.includes('master_link_status:up')) return false;
      }
      return true;
    }, 30_000, 100);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    nodes,
    seeds: nodes.map((n) => n.address).join(','),
    masters: mastersNow,
    cli,
    healthy,
    async reshard(from, to, slots) {
      const id = async (node: RedisClusterNode): Promise<string> => (await cli(['cluster', 'myid'], node)).trim();
      await cli(['--cluster', 'reshard', from.address, '--cluster-from', await id(from), '--cluster-to', await id(to), '--cluster-slots', String(slots), '--cluster-yes'], from);
    },
    stop,
  };
}
