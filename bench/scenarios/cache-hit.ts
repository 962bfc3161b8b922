/**
 * Cache hits: the same cacheable call (`eth_chainId` by default) through the bare node:http + undici
 * proxy, through the gateway without a cache, and through the gateway with the response cache, where
 * every call after the first is answered without the upstream hop the proxy pays. Beside them, the ceiling
 * of any answer from memory (`static-answer`) and a hit without a framework (`hand-written-hit`).
 */
import { BENCH_KEY, BENCH_NETWORK, UPSTREAM_CONNECTIONS } from '../config.js';
import { startAnvil } from '@tollgate/devnet';
import { runTargets, startServer, type BenchOptions, type TargetDefinition } from '../lib/harness.js';
import { checkBenchMethod, jsonRpcRequest } from '../lib/json-rpc-request.js';
import type { Scenario } from '../lib/scenario.js';

const scenario: Scenario = {
  name: 'cache-hit',
  description: 'a cached JSON-RPC call over HTTP: bare proxy vs gateway vs gateway answering from its cache',
  targets: ['bare-proxy', 'static-answer', 'hand-written-hit', 'gateway', 'gateway-cache-hit', 'gateway-cache-hit-before'],

  async run(options: BenchOptions) {
    checkBenchMethod(options.method);
    const anvil = await startAnvil();
    try {
      if (options.baseline === undefined && options.targets?.includes('gateway-cache-hit-before') === true) throw new Error('the gateway-cache-hit-before target needs --baseline <dir>');
      const gateway = (name: string, description: string, args: Record<string, string>, cwd?: string): TargetDefinition => ({
        name,
        description,
        async start() {
          const server = await startServer(name, 'bench/servers/gateway.ts', { upstream: anvil.url, ...args }, options, cwd);
          return { url: server.url, request: jsonRpcRequest(options.method, `/${BENCH_NETWORK}/v3/${BENCH_KEY}`), serverPids: server.ready.pids, server };
        },
      });
      const definitions: TargetDefinition[] = [
        {
          name: 'bare-proxy',
          description: 'node:http + undici Pool, bytes in, bytes out',
          async start() {
            const server = await startServer('bare-proxy', 'bench/servers/bare-proxy.ts', { upstream: anvil.url, connections: String(UPSTREAM_CONNECTIONS) }, options);
            return { url: server.url, request: jsonRpcRequest(options.method, '/'), serverPids: server.ready.pids, server };
          },
        },
        {
          name: 'static-answer',
          description: 'node:http answering every request with bytes held in memory: the ceiling of any answer from memory',
          async start() {
            const request = jsonRpcRequest(options.method, '/');
            const server = await startServer('static-answer', 'bench/servers/static-answer.ts', { upstream: anvil.url, call: request.body ?? '' }, options);
            return { url: server.url, request, serverPids: server.ready.pids, server };
          },
        },
        {
          name: 'hand-written-hit',
          description: 'the hand-written metered proxy answering from memory: a hit (parse, check, charge, envelope) without a framework',
          async start() {
            const server = await startServer('hand-written-hit', 'bench/servers/hand-written-gateway.ts', { upstream: anvil.url, connections: String(UPSTREAM_CONNECTIONS), cache: 'true' }, options);
            return { url: server.url, request: jsonRpcRequest(options.method, `/${BENCH_NETWORK}/v3/${BENCH_KEY}`), serverPids: server.ready.pids, server };
          },
        },
        gateway('gateway', 'Tollgate without a cache: every call goes to Anvil', {}),
        gateway('gateway-cache-hit', 'Tollgate with the response cache (memory store): every call after the first is a hit, metered like a miss', { cache: 'memory' }),
        ...(options.baseline === undefined
          ? []
          : [gateway('gateway-cache-hit-before', `the same cached gateway built from ${options.baseline}`, { cache: 'memory' }, options.baseline)]),
      ];
      const outcome = await runTargets(
        definitions,
        [
          { numerator: 'gateway-cache-hit', denominator: 'bare-proxy', goal: 2.0 },
          { numerator: 'static-answer', denominator: 'bare-proxy' },
          { numerator: 'gateway-cache-hit', denominator: 'static-answer' },
          { numerator: 'hand-written-hit', denominator: 'bare-proxy' },
          { numerator: 'gateway-cache-hit', denominator: 'hand-written-hit' },
          { numerator: 'gateway-cache-hit', denominator: 'gateway' },
          ...(options.baseline === undefined ? [] : [{ numerator: 'gateway-cache-hit', denominator: 'gateway-cache-hit-before' }]),
        ],
        options,
        [anvil.pid],
      );
      return {
        scenario: scenario.name,
        description: scenario.description,
        ...outcome,
        notes: [
          `request: POST {"jsonrpc":"2.0","id":1,"method":"${options.method}","params":[]}; the cache keeps eth_chainId for good and eth_blockNumber until the head moves (Anvil mines nothing here)`,
          'a hit still authenticates, validates, charges the method\'s credits and counts usage; it skips route, dispatch and the upstream',
          `upstream: one Anvil (${anvil.url}); the proxy and the gateways keep up to ${UPSTREAM_CONNECTIONS} keep-alive connections to it`,
        ],
      };
    } finally {
      await anvil.stop();
    }
  },
};

export default scenario;
