/**
 * Solana subscription fan-out: 1,000 `slotSubscribe` subscribers, on the devnet LiteSVM node's own
 * WebSocket (1,000 node subscriptions) and on the gateway's (one node subscription shared by all, each
 * notification metered). The node's slot is moved on one at a time; see `bench/lib/fan-out.ts` for what
 * is measured. The node runs in the bench's own process (it is a library), so its CPU is the load
 * generator's.
 */
import { loadavg } from 'node:os';
import { startLiteSvmInstance, type LiteSvmInstance } from '@tollgate/devnet';
import { compare, startServer, summarize, type BenchOptions, type RoundResult } from '../lib/harness.js';
import { CONNECTIONS, measureFanOut, SUBSCRIBERS, type FanOutStream } from '../lib/fan-out.js';
import type { ServerHandle } from '../lib/processes.js';
import type { Scenario } from '../lib/scenario.js';
import { BENCH_KEY, BENCH_SOLANA_NETWORK } from '../config.js';

/** `slotNotification` on the LiteSVM node, one slot per event. */
function slotStream(node: LiteSvmInstance): FanOutStream {
  return {
    subscribe: '"method":"slotSubscribe","params":[]',
    marker: '"slotNotification"',
    numberOf(text) {
      const at = text.indexOf('"slot":');
      let end = at + 7;
      while (end < text.length && text.charCodeAt(end) >= 0x30 && text.charCodeAt(end) <= 0x39) end++;
      return Number(text.slice(at + 7, end));
    },
    nodeWsUrl: node.wsUrl,
    nodePids: [],
    current: () => Promise.resolve(Number(node.node.slot('processed'))),
    emit: () => { node.node.advance(); return Promise.resolve(); },
  };
}

const scenario: Scenario = {
  name: 'solana-fan-out',
  description: '1,000 slotSubscribe subscribers: on the LiteSVM node\'s own WebSocket vs one shared upstream subscription through the gateway',
  targets: ['direct', 'gateway'],

  async run(options: BenchOptions) {
    const wanted = (name: string): boolean => options.targets === undefined || options.targets.includes(name);
    const node = await startLiteSvmInstance('litesvm#bench', { slotMs: 0, seed: false });
    const servers: ServerHandle[] = [];
    const slots = options.quick ? 20 : 100;
    try {
      const targets: Array<{ name: string; description: string; url: string; pids: readonly number[] }> = [];
      if (wanted('direct')) targets.push({ name: 'direct', description: 'the node\'s own WebSocket: 1,000 node subscriptions', url: node.wsUrl, pids: [process.pid] });
      if (wanted('gateway')) {
        const gateway = await startServer('gateway', 'bench/servers/ws-gateway.ts', { upstream: node.url, 'solana-upstream': node.url, 'solana-ws-upstream': node.wsUrl }, options);
        servers.push(gateway);
        targets.push({ name: 'gateway', description: 'Tollgate: one upstream slotSubscribe, fanned out to 1,000 subscribers, each notification metered', url: `${gateway.url.replace(/^http/, 'ws')}/${BENCH_SOLANA_NETWORK}/ws/v3/${BENCH_KEY}`, pids: gateway.ready.pids });
      }
      const rounds = new Map<string, RoundResult[]>(targets.map((t) => [t.name, []]));
      if (options.profile) for (const server of servers) server.signal('SIGUSR2');
      const stream = slotStream(node);
      for (let round = 1; round <= options.rounds; round++) {
        for (const target of targets) rounds.get(target.name)!.push(await measureFanOut(target.name, target.url, stream, target.pids, slots, round));
      }
      const measured = targets.map((t) => summarize(t.name, t.description, rounds.get(t.name)!));
      return {
        scenario: scenario.name,
        description: scenario.description,
        targets: measured,
        comparisons: compare(measured, [{ numerator: 'gateway', denominator: 'direct' }]),
        notes: [
          `${SUBSCRIBERS} slotSubscribe subscribers over ${CONNECTIONS} connections; ${slots} slots, one at a time, the next once every subscriber had the last`,
          'latency columns: from the node sending a slot (a probe subscribed on the node) to the last of the 1,000 subscribers having it; goal p99 <= 10 ms',
          'req/s is notifications delivered per second; CPU µs/req is the server\'s CPU per delivered notification (for direct, the bench process, which runs the node)',
          `load average at the end (uptime): ${loadavg().map((l) => l.toFixed(2)).join(' ')}`,
        ],
      };
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
      await node.stop();
    }
  },
};

export default scenario;
