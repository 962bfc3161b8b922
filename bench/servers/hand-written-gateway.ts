/** Child process: the hand-written metered proxy (`bench/hand-written-gateway.ts`). Args: `--upstream <url> [--connections N] [--cache true]`. */
import { startHandWrittenGateway } from '../hand-written-gateway.js';
import { BENCH_KEY, UPSTREAM_CONNECTIONS } from '../config.js';
import { requireArg, serve, serverArgs } from './serve.js';

/** The calls of the bench's mix and of its one-call scenarios (`--method`), at the spec's prices. */
const PRICES = { eth_chainId: 5, eth_blockNumber: 80, eth_getBlockByNumber: 80, eth_call: 80, eth_getTransactionReceipt: 80, eth_getLogs: 255, getAccountInfo: 160 };

const args = serverArgs();
const connections = Number(args.connections ?? UPSTREAM_CONNECTIONS);
await serve(async () => {
  const proxy = await startHandWrittenGateway({ upstream: requireArg(args, 'upstream'), key: BENCH_KEY, prices: PRICES, connections, cache: args.cache === 'true' });
  return { port: proxy.port, pids: [process.pid], close: () => proxy.close() };
});
