/**
 * Subscription fan-out: 1,000 `newHeads` subscribers, on Anvil's own WebSocket (1,000 node
 * subscriptions) and on the gateway's (one node subscription shared by all). Blocks are mined one at a
 * time; see `bench/lib/fan-out.ts` for what is measured.
 */
import { startAnvil, type AnvilInstance } from '@tollgate/devnet';
import type { BenchOptions } from '../lib/harness.js';
import { CONNECTIONS, runFanOut, SUBSCRIBERS, type FanOutStream } from '../lib/fan-out.js';
import type { Scenario } from '../lib/scenario.js';
import { BENCH_NETWORK } from '../config.js';

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
    const anvil = await startAnvil({ noMining: true });
    const blocks = options.quick ? 20 : 100;
    try {
      return await runFanOut(scenario, options, headStream(anvil), {
        direct: { description: 'Anvil\'s own WebSocket: 1,000 node subscriptions', url: anvil.wsUrl, pids: [anvil.pid] },
        gatewayArgs: { upstream: anvil.url, 'ws-upstream': anvil.wsUrl },
        network: BENCH_NETWORK,
        gatewayDescription: 'Tollgate: one upstream subscription, fanned out to 1,000 subscribers, each event metered',
        events: blocks,
        notes: [
          `${SUBSCRIBERS} newHeads subscribers over ${CONNECTIONS} connections; ${blocks} blocks mined one at a time (evm_mine), the next once every subscriber had the last`,
          'latency columns: from the node sending a head (a probe subscribed on Anvil) to the last of the 1,000 subscribers having it; goal p99 <= 10 ms',
          'req/s is events delivered per second; CPU µs/req is the server\'s CPU per delivered event (for direct, Anvil\'s)',
        ],
      });
    } finally {
      await anvil.stop();
    }
  },
};

export default scenario;
