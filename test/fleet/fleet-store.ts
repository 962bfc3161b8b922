/**
 * The store a fleet shares, as a parameter of the fleet test: what the gateways are told (`tollgate start`
 * flags and the `ledger-redis` settings), which Redis processes can be faulted, and how to bring one back.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Host } from '../helpers/host-network.js';
import { startHostProcess, type HostProcess } from '../helpers/host-process.js';

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
  /** Flags of `tollgate start` that point a gateway at it. */
  readonly startFlags: readonly string[];
  /** The `ledger-redis` settings that reach it, for readers outside the gateways. */
  readonly settings: Readonly<Record<string, unknown>>;
  /** The node a "kill a master" fault kills: a master serving slots now. */
  master(): Promise<StoreNode>;
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
