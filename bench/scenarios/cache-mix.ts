/**
 * A realistic mix through the cache: the same replayed sequence of block, receipt, log and call reads
 * (skewed towards recent blocks) sent through the gateway without a cache and with one, from a cold
 * cache. Reports the hit ratio, the upstream calls saved, p50/p99 and server CPU per call.
 */
import { BENCH_KEY, BENCH_NETWORK } from '../config.js';
import { startAnvil } from '@tollgate/devnet';
import { compare, startServer, summarize, type BenchOptions, type RoundResult, type TargetReport } from '../lib/harness.js';
import { mixSequence, replayMix, type MixResult } from '../lib/replay-mix.js';
import type { Scenario } from '../lib/scenario.js';

const BLOCKS = 64;

function asRound(result: MixResult): RoundResult {
  const ok = result.calls - result.failures;
  return {
    round: 1,
    seconds: result.seconds,
    responses: result.calls,
    ok,
    okPerSecond: result.okPerSecond,
    latency: { p50: result.latency.p50, p90: NaN, p99: result.latency.p99, max: NaN, mean: NaN },
    non2xx: 0,
    badBody: result.failures,
    transportErrors: 0,
    timeouts: 0,
    statuses: { 200: result.calls },
    samples: result.samples,
    serverCores: NaN,
    upstreamCores: NaN,
    loadgenCores: NaN,
    serverMicrosPerRequest: result.serverMicrosPerRequest,
    serverUserMicrosPerRequest: NaN,
    serverSystemMicrosPerRequest: NaN,
    warmupFailures: 0,
    warmupResponses: 0,
  };
}

const scenario: Scenario = {
  name: 'cache-mix',
  description: 'a replayed mix of block, receipt, log and call reads: gateway vs gateway with the response cache (cold)',
  targets: ['gateway', 'gateway-cache'],

  async run(options: BenchOptions) {
    const anvil = await startAnvil();
    try {
      const accounts = await anvil.rpc<string[]>('eth_accounts');
      const transactions: string[] = [];
      for (let i = 0; i < BLOCKS; i++) transactions.push(await anvil.rpc<string>('eth_sendTransaction', [{ from: accounts[i % 5], to: accounts[5 + (i % 5)], value: '0x1' }]));
      const blocks = Array.from({ length: BLOCKS }, (_, i) => i + 1);
      const length = options.quick ? 3000 : 20_000;
      const calls = mixSequence({ blocks, transactions, callee: accounts[9]! }, length);
      const targets: TargetReport[] = [];
      const results = new Map<string, MixResult>();
      for (const [name, description, args] of [
        ['gateway', 'Tollgate without a cache', {}],
        ['gateway-cache', 'Tollgate with the response cache (memory store), cold at the start', { cache: 'memory' }],
      ] as const) {
        if (options.targets !== undefined && !options.targets.includes(name)) continue;
        const server = await startServer(name, 'bench/servers/gateway.ts', { upstream: anvil.url, ...args }, options);
        try {
          const result = await replayMix(server.url, `/${BENCH_NETWORK}/v3/${BENCH_KEY}`, calls, options.connections, server.ready.pids);
          process.stderr.write(`[bench] ${name}: ${Math.round(result.okPerSecond)} calls/s  p50 ${result.latency.p50.toFixed(2)} ms  p99 ${result.latency.p99.toFixed(2)} ms  ${Math.round(result.serverMicrosPerRequest)} us/call  hits ${result.hits}  misses ${result.misses}\n`);
          results.set(name, result);
          targets.push(summarize(name, description, [asRound(result)]));
        } finally {
          await server.stop();
        }
      }
      const cached = results.get('gateway-cache');
      const notes = [
        `sequence: ${length} calls over ${BLOCKS} mined blocks: 40% eth_getBlockByNumber, 25% eth_getTransactionReceipt, 15% eth_getLogs (5-block ranges), 10% eth_call at a height, 10% eth_blockNumber; recent blocks read most; ${options.connections} concurrent clients`,
      ];
      if (cached !== undefined) {
        const considered = cached.hits + cached.misses;
        notes.push(`cache: hit ratio ${((cached.hits / considered) * 100).toFixed(1)}% (${cached.hits} hits, ${cached.misses} misses, in-flight sharing included); upstream calls saved: ${cached.hits} of ${length} (${((cached.hits / length) * 100).toFixed(1)}%), not counting the cache's own head reads (two per second)`);
      }
      notes.push('Anvil mines nothing during the run, so every block read is of a block at or below the head');
      return { scenario: scenario.name, description: scenario.description, targets, comparisons: compare(targets, [{ numerator: 'gateway-cache', denominator: 'gateway' }]), notes };
    } finally {
      await anvil.stop();
    }
  },
};

export default scenario;
