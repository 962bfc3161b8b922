/**
 * The store a fleet shares, as a parameter of the fleet test: what the gateways are told (`tollgate start`
 * flags and the `ledger-redis` settings), which Redis processes can be faulted, and how to bring one back.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Host } from '../helpers/host-network.js';
import { startHostProcess, type HostProcess } from '../helpers/host-process.js';
import { until } from '../helpers/until.js';

/** A Redis process of the fleet's store. */
export interface StoreNode {
  /** `host:port` */
  readonly address: string;
  /** The running process (replaced by {@link FleetStore.revive}). */
  readonly process: HostProcess;
}

/** The Redis deployment the fleet shares. */
export interface FleetStore {
  /** `single` (one primary, append-only file) or `cluster` (masters with replicas). */
  readonly kind: 'single' | 'cluster';
  /** Flags of `tollgate start` that point a gateway at it (`--redis <url>`, `--redis-cluster <nodes>`). */
  readonly startFlags: readonly string[];
  /** The `ledger-redis` settings that reach it, for readers outside the gateways. */
  readonly settings: Readonly<Record<string, unknown>>;
  /**
   * The node a "kill a master" fault strikes: the master serving the slot of Redis key `key` now (for a
   * cluster; the one primary otherwise), so that the fault reaches the calls of the key it names.
   */
  master(key: string): Promise<StoreNode>;
  /**
   * Brings the store back to full strength after `node` was killed: for a single primary, restarts it
   * (from its append-only file); for a cluster, restarts it as a replica once a replica has taken over.
   */
  revive(node: StoreNode): Promise<void>;
  /** Whether a killed master leaves the store without a primary until {@link revive} (a single primary), or a replica takes over (a cluster). */
  readonly failsOver: boolean;
  /** Stops every Redis process and removes its files. */
  close(): Promise<void>;
}

const REDIS_READY = /ready to accept/i;

/**
 * One `redis-server` on `host`, every write on disk before it is answered (`appendfsync always`), so that
 * a SIGKILL and a restart keep what was charged.
 */
export async function startSingleRedis(host: Host): Promise<FleetStore> {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-fleet-redis-'));
  const port = await host.port();
  const args = ['--port', String(port), '--bind', host.address, '--protected-mode', 'no', '--save', '', '--appendonly', 'yes', '--appendfsync', 'always', '--dir', dir];
  const launch = (): Promise<HostProcess> => startHostProcess(host, 'redis-server', args, REDIS_READY, { timeoutMs: 20_000 });
  let node: StoreNode = { address: `${host.address}:${port}`, process: await launch() };
  const url = `redis://${host.address}:${port}`;
  return {
    kind: 'single',
    startFlags: ['--redis', url],
    settings: { url },
    failsOver: false,
    master: () => Promise.resolve(node),
    async revive(killed) {
      await killed.process.killGroup();
      node = { address: node.address, process: await launch() };
    },
    async close() {
      await node.process.killGroup();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Runs `redis-cli args` on `host` and resolves with its output (fails on a non-zero exit). */
function redisCli(host: Host, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = host.spawn('redis-cli', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`redis-cli ${args.join(' ')} exited with ${code}: ${out}`))));
  });
}

/** One line of `CLUSTER NODES`: a node's address, its roles and states, and whether it serves slots. */
interface ClusterNodeLine {
  readonly address: string;
  readonly flags: readonly string[];
  readonly slots: boolean;
  /** The slot ranges it serves, `[first, last]`. */
  readonly ranges: ReadonlyArray<readonly [number, number]>;
  readonly linked: boolean;
}

function clusterNodes(text: string): ClusterNodeLine[] {
  return text.split('\n').filter(Boolean).map((line) => {
    const cells = line.split(' ');
    // Slots are `a-b` or `a` (a migrating slot `[a->-id]` is left out).
    const ranges = cells.slice(8).filter((c) => /^\d+(-\d+)?$/.test(c)).map((c) => {
      const [first, last = first] = c.split('-').map(Number);
      return [first!, last!] as const;
    });
    return { address: cells[1]!.split('@')[0]!, flags: cells[2]!.split(','), slots: ranges.length > 0, ranges, linked: cells[7] === 'connected' };
  });
}

/**
 * A Redis Cluster of three masters and three replicas on `host` (one `redis-server` per port, each with
 * its append-only file, `cluster-node-timeout` 1 s so that a replica takes over a killed master within a
 * few seconds), formed with `redis-cli --cluster create`.
 */
export async function startRedisCluster(host: Host): Promise<FleetStore> {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-fleet-cluster-'));
  const ports = [];
  for (let i = 0; i < 6; i++) ports.push(await host.port());
  const launch = (port: number): Promise<HostProcess> => {
    const nodeDir = join(dir, String(port));
    mkdirSync(nodeDir, { recursive: true });
    return startHostProcess(host, 'redis-server', [
      '--port', String(port), '--bind', host.address, '--protected-mode', 'no', '--save', '', '--dir', nodeDir,
      '--appendonly', 'yes', '--appendfsync', 'always',
      // A replica always takes over (validity factor 0): its master's last write is never old here, but
      // a replica that has not heard from it for a ping period would otherwise count itself too stale.
      '--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '1000', '--cluster-replica-validity-factor', '0',
    ], REDIS_READY, { timeoutMs: 20_000 });
  };
  const nodes = new Map<string, StoreNode>();
  const close = async (): Promise<void> => {
    for (const node of nodes.values()) await node.process.killGroup();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const port of ports) {
      const address = `${host.address}:${port}`;
      nodes.set(address, { address, process: await launch(port) });
    }
    await redisCli(host, ['--cluster', 'create', ...nodes.keys(), '--cluster-replicas', '1', '--cluster-yes']);
    const view = async (): Promise<ClusterNodeLine[]> => {
      for (const node of nodes.values()) {
        if (node.process.exited()) continue;
        const [h, p] = node.address.split(':');
        try {
          return clusterNodes(await redisCli(host, ['-h', h!, '-p', p!, 'cluster', 'nodes']));
        } catch { /* a stopped or restarting node: ask the next */ }
      }
      throw new Error('no cluster node answers');
    };
    // Formed: three masters serving slots, three replicas, every link up, every node agreeing it is ok.
    const whole = async (): Promise<boolean> => {
      const lines = await view();
      const masters = lines.filter((l) => l.flags.includes('master') && !l.flags.includes('fail') && l.slots);
      const replicas = lines.filter((l) => l.flags.includes('slave') && !l.flags.includes('fail'));
      if (masters.length !== 3 || replicas.length !== 3 || !lines.every((l) => l.linked)) return false;
      for (const address of nodes.keys()) {
        const [h, p] = address.split(':');
        if (!(await redisCli(host, ['-h', h!, '-p', p!, 'cluster', 'info'])).includes('cluster_state:ok')) return false;
      }
      return true;
    };
    await until('the Redis Cluster to form', whole, 60_000, 200);
    const list = [...nodes.keys()];
    return {
      kind: 'cluster',
      startFlags: ['--redis-cluster', list.join(',')],
      settings: { cluster: { nodes: list } },
      failsOver: true,
      async master(key) {
        const [h, p] = list[0]!.split(':');
        const slot = Number((await redisCli(host, ['-h', h!, '-p', p!, 'cluster', 'keyslot', key])).trim());
        const line = (await view()).find((l) => l.flags.includes('master') && !l.flags.includes('fail') && l.ranges.some(([a, b]) => slot >= a && slot <= b));
        if (line === undefined) throw new Error(`no master serves slot ${slot}`);
        return nodes.get(line.address)!;
      },
      async revive(killed) {
        await killed.process.killGroup();
        // A replica has taken over: three other masters serve every slot, the killed node counts as failed.
        await until('a replica to take over', async () => {
          const lines = await view();
          const others = lines.filter((l) => l.address !== killed.address && l.flags.includes('master') && !l.flags.includes('fail') && l.slots);
          return others.length === 3 && lines.some((l) => l.address === killed.address && l.flags.includes('fail'));
        }, 30_000, 100);
        // The killed node comes back from its nodes.conf as a replica of the new master.
        nodes.set(killed.address, { address: killed.address, process: await launch(Number(killed.address.split(':')[1])) });
        await until('the revived node to rejoin as a replica', whole, 30_000, 200);
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
