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
import { compare, startServer, summarize, type BenchOptions, type ComparisonReport, type RoundResult, type TargetReport } from '../lib/harness.js';
import { IPFS_KEY as KEY, IPFS_SECRET as SECRET, MIB, addFile, cat, measureTransfers, memoryVerdict, rssBaseline, type IpfsTarget } from '../lib/ipfs-transfer.js';
import type { ServerHandle } from '../lib/processes.js';
import type { Scenario } from '../lib/scenario.js';


function report(target: IpfsTarget, rounds: readonly RoundResult[]): TargetReport {
  return summarize(target.name, target.description, rounds);
}

const scenario: Scenario = {
  name: 'ipfs-cat',
  description: 'IPFS cat of a large file: the embedded IPFS node directly vs through the gateway\'s file-storage API',
  targets: ['direct', 'gateway'],

  async run(options: BenchOptions) {
    const size = (options.quick ? 64 : 256) * MIB;
    const cats = options.quick ? 1 : 2;
    const wanted = (name: string): boolean => options.targets === undefined || options.targets.includes(name);
    const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-bench-ipfs-'));
    const servers: ServerHandle[] = [];
    try {
      process.stderr.write(`[bench] ipfs-cat: starting the IPFS node and adding a ${size / MIB} MiB file\n`);
      const node = await startServer('ipfs-node', 'bench/servers/ipfs-node.ts', { 'data-dir': dataDir }, options);
      servers.push(node);
      const cid = await addFile(`${node.url}/api/v0`, size);
      const targets: IpfsTarget[] = [];
      if (wanted('direct')) {
        targets.push({ name: 'direct', description: 'the embedded IPFS node itself (helia over blockstore-fs)', url: `${node.url}/api/v0/cat?arg=${cid}`, headers: {}, pids: node.ready.pids });
      }
      let gatewayPid: number | undefined;
      if (wanted('gateway')) {
        const gateway = await startServer('gateway', 'bench/servers/ipfs-gateway.ts', { upstream: node.url, key: KEY, secret: SECRET }, options);
        servers.push(gateway);
        gatewayPid = gateway.pid;
        const authorization = `Basic ${Buffer.from(`${KEY}:${SECRET}`).toString('base64')}`;
        targets.push({ name: 'gateway', description: 'Tollgate: ipfs plugin, basic auth + secret, plan, rate buckets, streamed relay', url: `${gateway.url}/ipfs/api/v0/cat?arg=${cid}`, headers: { authorization }, pids: gateway.ready.pids });
      }

      // Priming: the JIT, the pools and the page cache, on a part of the file.
      if (options.prime > 0) {
        process.stderr.write('[bench] ipfs-cat: priming every target\n');
        for (const target of targets) for (let i = 0; i < 2; i++) await cat(`${target.url}&length=${Math.min(size, 32 * MIB)}`, target.headers, Math.min(size, 32 * MIB));
      }
      const { baseline, resettable: peakResettable } = rssBaseline(gatewayPid);
      const rounds = new Map<string, RoundResult[]>(targets.map((t) => [t.name, []]));
      let peak = baseline;
      for (let round = 1; round <= options.rounds; round++) {
        for (const target of targets) {
          const watch = target.name === 'gateway' && gatewayPid !== undefined ? { pid: gatewayPid, hwm: peakResettable } : undefined;
          const { result, peak: seen } = await measureTransfers(target, round, cats, (t) => cat(t.url, t.headers, size), target.name === 'gateway' ? node.ready.pids : [], watch);
          if (watch !== undefined && Number.isFinite(seen)) peak = Math.max(peak, seen);
          rounds.get(target.name)!.push(result);
          process.stderr.write(`[bench] round ${round}/${options.rounds} ${target.name.padEnd(8)} ${result.okPerSecond.toFixed(1)} MiB/s  ${result.ok}/${result.responses} cats  server ${(result.serverCores * 100).toFixed(0)}% cpu\n`);
        }
      }
      const measured = targets.map((t) => report(t, rounds.get(t.name)!));
      const comparisons: ComparisonReport[] = [...compare(measured, [{ numerator: 'gateway', denominator: 'direct', goal: 0.9 }])];
      const notes = [
        `file: ${size / MIB} MiB (CIDv0 ${cid}, kubo's add defaults), ${cats} whole cat(s) per target per round, one at a time`,
        'for this scenario the req/s column is MiB/s, p50/p99 are per cat, and CPU us/req is CPU microseconds per MiB served',
      ];
      if (gatewayPid !== undefined) {
        const memory = memoryVerdict(baseline, peak, peakResettable);
        comparisons.push(memory.comparison);
        notes.push(memory.note);
      }
      return { scenario: scenario.name, description: scenario.description, targets: measured, comparisons, notes };
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
};

export default scenario;
