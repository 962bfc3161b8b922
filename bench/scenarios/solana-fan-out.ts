/**
 * Solana subscription fan-out: 1,000 `slotSubscribe` subscribers, on the devnet LiteSVM node's own
 * WebSocket (1,000 node subscriptions) and on the gateway's (one node subscription shared by all, each
 * notification metered). The node's slot is moved on one at a time; see `bench/lib/fan-out.ts` for what
 * is measured. The node runs in the bench's own process (it is a library), so its CPU is the load
 * generator's.
 */
import { startLiteSvmInstance, type LiteSvmInstance } from '@tollgate/devnet';
import type { BenchOptions } from '../lib/harness.js';
import { CONNECTIONS, runFanOut, SUBSCRIBERS, type FanOutStream } from '../lib/fan-out.js';
import type { Scenario } from '../lib/scenario.js';
import { BENCH_SOLANA_NETWORK } from '../config.js';

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
    const node = await startLiteSvmInstance('litesvm#bench', { slotMs: 0, seed: false });
    const slots = options.quick ? 20 : 100;
    try {
      return await runFanOut(scenario, options, slotStream(node), {
        direct: { description: 'the node\'s own WebSocket: 1,000 node subscriptions', url: node.wsUrl, pids: [process.pid] },
        gatewayArgs: { upstream: node.url, 'solana-upstream': node.url, 'solana-ws-upstream': node.wsUrl },
        network: BENCH_SOLANA_NETWORK,
        gatewayDescription: 'Tollgate: one upstream slotSubscribe, fanned out to 1,000 subscribers, each notification metered',
        events: slots,
        notes: [
          `${SUBSCRIBERS} slotSubscribe subscribers over ${CONNECTIONS} connections; ${slots} slots, one at a time, the next once every subscriber had the last`,
          'latency columns: from the node sending a slot (a probe subscribed on the node) to the last of the 1,000 subscribers having it; goal p99 <= 10 ms',
          'req/s is notifications delivered per second; CPU µs/req is the server\'s CPU per delivered notification (for direct, the bench process, which runs the node)',
        ],
      });
    } finally {
      await node.stop();
    }
  },
};

export default scenario;
