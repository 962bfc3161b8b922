/**
 * IPFS `add` of a large file: the same bytes (128 MiB, 32 MiB with --quick) uploaded as a streamed
 * multipart body to the devnet's embedded IPFS node directly and through the gateway's file-storage API
 * (basic auth, plan, rate buckets, the upload metered by bytes and bounded, the pin recorded as the key's).
 * It reports the upload throughput of each, their ratio, and how much the gateway process's resident
 * memory grew (the upload is relayed chunk by chunk, never held). Every add must answer the CID the
 * direct add gave.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type BenchOptions } from '../lib/harness.js';
import { IPFS_KEY as KEY, IPFS_SECRET as SECRET, MIB, addFile, transferProfiles, transferRounds, type IpfsTarget, type ProfiledServer, type Transfer } from '../lib/ipfs-transfer.js';
import type { ServerHandle } from '../lib/processes.js';
import type { Scenario } from '../lib/scenario.js';

/** One whole-file add to `target`, checked against the CID kubo's defaults give. */
async function add(target: IpfsTarget, size: number, cid: string): Promise<Transfer> {
  const started = performance.now();
  try {
    const got = await addFile(target.url, size, target.headers);
    const ms = performance.now() - started;
    return got === cid ? { ms, bytes: size } : { ms, bytes: size, problem: `CID ${got} instead of ${cid}` };
  } catch (error) {
    const message = (error as Error).message;
    return { ms: performance.now() - started, bytes: 0, problem: message.startsWith('adding') ? `HTTP ${message}` : `connection error: ${message}` };
  }
}

const scenario: Scenario = {
  name: 'ipfs-add',
  description: 'IPFS add of a large file: the embedded IPFS node directly vs through the gateway\'s file-storage API',
  targets: ['direct', 'gateway'],

  async run(options: BenchOptions) {
    const size = (options.quick ? 32 : 128) * MIB;
    const adds = options.quick ? 1 : 2;
    const wanted = (name: string): boolean => options.targets === undefined || options.targets.includes(name);
    const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-bench-ipfs-add-'));
    const servers: ServerHandle[] = [];
    const profiled: ProfiledServer[] = [];
    try {
      process.stderr.write(`[bench] ipfs-add: starting the IPFS node; each add uploads ${size / MIB} MiB\n`);
      const node = await startServer('ipfs-node', 'bench/servers/ipfs-node.ts', { 'data-dir': dataDir }, options);
      servers.push(node);
      profiled.push({ server: node, targets: ['direct', 'gateway'] });
      const cid = await addFile(`${node.url}/api/v0`, size);
      const targets: IpfsTarget[] = [];
      if (wanted('direct')) {
        targets.push({ name: 'direct', description: 'the embedded IPFS node itself (helia over blockstore-fs)', url: `${node.url}/api/v0`, headers: {}, pids: node.ready.pids });
      }
      let gatewayPid: number | undefined;
      if (wanted('gateway')) {
        const gateway = await startServer('gateway', 'bench/servers/ipfs-gateway.ts', { upstream: node.url, key: KEY, secret: SECRET }, options);
        servers.push(gateway);
        profiled.push({ server: gateway, targets: ['gateway'] });
        gatewayPid = gateway.pid;
        const authorization = `Basic ${Buffer.from(`${KEY}:${SECRET}`).toString('base64')}`;
        targets.push({ name: 'gateway', description: 'Tollgate: ipfs plugin, basic auth + secret, plan, rate buckets, metered streamed upload', url: `${gateway.url}/ipfs/api/v0`, headers: { authorization }, pids: gateway.ready.pids });
      }
      if (options.prime > 0) {
        process.stderr.write('[bench] ipfs-add: priming every target\n');
        for (const target of targets) await add(target, size, cid);
      }
      const { measured, comparisons, memoryNote } = await transferRounds(options, { targets, gatewayPid, nodePids: node.ready.pids, count: adds, transfer: (t) => add(t, size, cid), unit: 'adds', goal: 0.85, profiled });
      const notes = [
        `file: ${size / MIB} MiB (CIDv0 ${cid}, kubo's add defaults), ${adds} whole add(s) per target per round, one at a time; the node already holds the blocks after the first`,
        'for this scenario the req/s column is MiB/s uploaded, p50/p99 are per add, and CPU us/req is CPU microseconds per MiB',
      ];
      if (memoryNote !== undefined) notes.push(memoryNote);
      // The servers write their profiles as they stop.
      await Promise.all(servers.map((s) => s.stop()));
      const profiles = transferProfiles(options, profiled, measured);
      if (profiles !== undefined) notes.push('in the profiles, us/req is microseconds per MiB moved (the node moves every target\'s bytes)');
      return { scenario: scenario.name, description: scenario.description, targets: measured, comparisons, notes, ...(profiles === undefined ? {} : { profiles }) };
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
};

export default scenario;
