/**
 * Subscription fan-out: 1,000 `newHeads` subscribers, on Anvil's own WebSocket (1,000 node
 * subscriptions) and on the gateway's (one node subscription shared by all). Blocks are mined one at a
 * time; see `bench/lib/fan-out.ts` for what is measured.
 */
import { loadavg } from 'node:os';
import { startAnvil, type AnvilInstance } from '@tollgate/devnet';
import { compare, startServer, summarize, type BenchOptions, type RoundResult } from '../lib/harness.js';
import { CONNECTIONS, measureFanOut, SUBSCRIBERS, type FanOutStream } from '../lib/fan-out.js';
import type { ServerHandle } from '../lib/processes.js';
import type { Scenario } from '../lib/scenario.js';
import { BENCH_KEY, BENCH_NETWORK } from '../config.js';

/** `newHeads` on Anvil, one block mined per event. */
function headStream(anvil: AnvilInstance): FanOutStream {
  return {
    subscribe: '"method":"eth_subscribe","params":["newHeads"]',
    marker: '"eth_subscription"',
    // The block number is all that is read: a cheap scan instead of a parse keeps the load generator light.
    numberOf(text) {
      const at = text.indexOf('"number":"');
      return Number.parseInt(text.slice(at + 10, text.indexOf('"', at + 10)), 16);
    },
    nodeWsUrl: anvil.wsUrl,
    nodePids: [anvil.pid],
    current: async () => Number.parseInt(await anvil.rpc<string>('eth_blockNumber'), 16),
    emit: async () => { await anvil.rpc('evm_mine'); },
  };
}

const scenario: Scenario = {
  name: 'fan-out',
  description: '1,000 newHeads subscribers: on Anvil\'s own WebSocket vs one shared upstream subscription through the gateway',
  targets: ['direct', 'gateway'],

  async run(options: BenchOptions) {
    const wanted = (name: string): boolean => options.targets === undefined || options.targets.includes(name);
    const anvil = await startAnvil({ noMining: true });
    const servers: ServerHandle[] = [];
    const blocks = options.quick ? 20 : 100;
    try {
      const targets: Array<{ name: string; description: string; url: string; pids: readonly number[] }> = [];
      if (wanted('direct')) targets.push({ name: 'direct', description: 'Anvil\'s own WebSocket: 1,000 node subscriptions', url: anvil.wsUrl, pids: [anvil.pid] });
      if (wanted('gateway')) {
        const gateway = await startServer('gateway', 'bench/servers/ws-gateway.ts', { upstream: anvil.url, 'ws-upstream': anvil.wsUrl }, options);
        servers.push(gateway);
        targets.push({ name: 'gateway', description: 'Tollgate: one upstream subscription, fanned out to 1,000 subscribers, each event metered', url: `${gateway.url.replace(/^http/, 'ws')}/${BENCH_NETWORK}/ws/v3/${BENCH_KEY}`, pids: gateway.ready.pids });
      }
      const rounds = new Map<string, RoundResult[]>(targets.map((t) => [t.name, []]));
      // `--profile`: the gateway's profiler starts now (start-up left out); it writes the profile as it stops.
      if (options.profile) for (const server of servers) server.signal('SIGUSR2');
      const stream = headStream(anvil);
      for (let round = 1; round <= options.rounds; round++) {
        for (const target of targets) rounds.get(target.name)!.push(await measureFanOut(target.name, target.url, stream, target.pids, blocks, round));
      }
      const measured = targets.map((t) => summarize(t.name, t.description, rounds.get(t.name)!));
      return {
        scenario: scenario.name,
        description: scenario.description,
        targets: measured,
        comparisons: compare(measured, [{ numerator: 'gateway', denominator: 'direct' }]),
        notes: [
          `${SUBSCRIBERS} newHeads subscribers over ${CONNECTIONS} connections; ${blocks} blocks mined one at a time (evm_mine), the next once every subscriber had the last`,
          'latency columns: from the node sending a head (a probe subscribed on Anvil) to the last of the 1,000 subscribers having it; goal p99 <= 10 ms',
          'req/s is events delivered per second; CPU µs/req is the server\'s CPU per delivered event (for direct, Anvil\'s)',
          `load average at the end (uptime): ${loadavg().map((l) => l.toFixed(2)).join(' ')}`,
        ],
      };
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
      await anvil.stop();
    }
  },
};

export default scenario;
