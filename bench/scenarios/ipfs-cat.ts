/**
 * IPFS `cat` of a large file: the same file (256 MiB, 64 MiB with --quick), streamed from the devnet's
 * embedded IPFS node directly and through the gateway's file-storage API (basic auth, plan, rate
 * buckets, streamed relay). It reports the throughput of each, their ratio, and how much the gateway
 * process's resident memory grew while it streamed (it should stay flat: the body is relayed chunk by
 * chunk with backpressure, never held).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type BenchOptions } from '../lib/harness.js';
import { CpuPlacement, IPFS_KEY as KEY, IPFS_SECRET as SECRET, MIB, addFile, cat, transferProfiles, transferRounds, type IpfsTarget, type ProfiledServer } from '../lib/ipfs-transfer.js';
import type { ServerHandle } from '../lib/processes.js';
import type { Scenario } from '../lib/scenario.js';


const scenario: Scenario = {
  name: 'ipfs-cat',
  description: 'IPFS cat of a large file: the embedded IPFS node directly vs through the gateway\'s file-storage API',
  targets: ['direct', 'bare-proxy', 'gateway'],

  async run(options: BenchOptions) {
    const size = (options.quick ? 64 : 256) * MIB;
    const cats = options.quick ? 1 : 2;
    const wanted = (name: string): boolean => options.targets === undefined || options.targets.includes(name);
    const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-bench-ipfs-'));
    const servers: ServerHandle[] = [];
    const profiled: ProfiledServer[] = [];
    const placement = new CpuPlacement();
    try {
      process.stderr.write(`[bench] ipfs-cat: starting the IPFS node and adding a ${size / MIB} MiB file\n`);
      const node = await startServer('ipfs-node', 'bench/servers/ipfs-node.ts', { 'data-dir': dataDir }, options);
      servers.push(node);
      profiled.push({ server: node, targets: ['direct', 'bare-proxy', 'gateway'] });
      placement.node(node.pid);
      placement.client(process.pid);
      const cid = await addFile(`${node.url}/api/v0`, size);
      const targets: IpfsTarget[] = [];
      if (wanted('direct')) {
        targets.push({ name: 'direct', description: 'the embedded IPFS node itself (helia over blockstore-fs)', url: `${node.url}/api/v0/cat?arg=${cid}`, headers: {}, pids: node.ready.pids });
      }
      if (wanted('bare-proxy')) {
        const bare = await startServer('bare-proxy', 'bench/servers/bare-stream-proxy.ts', { upstream: node.url }, options);
        servers.push(bare);
        profiled.push({ server: bare, targets: ['bare-proxy'] });
        placement.client(bare.pid);
        targets.push({ name: 'bare-proxy', description: 'node:http + undici, the body piped through: the floor of any streaming relay in Node', url: `${bare.url}/api/v0/cat?arg=${cid}`, headers: {}, pids: bare.ready.pids });
      }
      let gatewayPid: number | undefined;
      if (wanted('gateway')) {
        const gateway = await startServer('gateway', 'bench/servers/ipfs-gateway.ts', { upstream: node.url, key: KEY, secret: SECRET }, options);
        servers.push(gateway);
        profiled.push({ server: gateway, targets: ['gateway'] });
        placement.client(gateway.pid);
        gatewayPid = gateway.pid;
        const authorization = `Basic ${Buffer.from(`${KEY}:${SECRET}`).toString('base64')}`;
        targets.push({ name: 'gateway', description: 'Tollgate: ipfs plugin, basic auth + secret, plan, rate buckets, streamed relay', url: `${gateway.url}/ipfs/api/v0/cat?arg=${cid}`, headers: { authorization }, pids: gateway.ready.pids });
      }

      // Priming: the JIT, the pools and the page cache, on a part of the file.
      if (options.prime > 0) {
        process.stderr.write('[bench] ipfs-cat: priming every target\n');
        for (const target of targets) for (let i = 0; i < 2; i++) await cat(`${target.url}&length=${Math.min(size, 32 * MIB)}`, target.headers, Math.min(size, 32 * MIB));
      }
      const { measured, comparisons, memoryNote } = await transferRounds(options, { targets, gatewayPid, nodePids: node.ready.pids, count: cats, transfer: (t) => cat(t.url, t.headers, size), unit: 'cats', goal: 0.9, profiled });
      const notes = [
        `file: ${size / MIB} MiB (CIDv0 ${cid}, kubo's add defaults), ${cats} whole cat(s) per target per round, one at a time`,
        'for this scenario the req/s column is MiB/s, p50/p99 are per cat, and CPU us/req is CPU microseconds per MiB served',
        placement.note(),
      ];
      if (memoryNote !== undefined) notes.push(memoryNote);
      // The servers write their profiles as they stop.
      await Promise.all(servers.map((s) => s.stop()));
      const profiles = transferProfiles(options, profiled, measured);
      if (profiles !== undefined) notes.push('in the profiles, us/req is microseconds per MiB moved (the node moves every target\'s bytes)');
      return { scenario: scenario.name, description: scenario.description, targets: measured, comparisons, notes, ...(profiles === undefined ? {} : { profiles }) };
    } finally {
      placement.release();
      await Promise.all(servers.map((s) => s.stop()));
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
};

export default scenario;
