/**
 * HTTP JSON-RPC against an upstream that answers instantly (`bench/servers/instant-node.ts`), so the
 * node is never the bottleneck and each target's own cost shows: the bare proxy, fastify's proxy and the
 * Tollgate gateway with its whole pipeline, side by side in one run. The calls are the real-call mix
 * (`bench/lib/real-call-mix.ts`), Solana's `getAccountInfo` included, each answered with a realistic body.
 */
import { BENCH_KEY, BENCH_NETWORK, BENCH_SOLANA_NETWORK, UPSTREAM_CONNECTIONS } from '../config.js';
import { runTargets, startServer, type BenchOptions, type TargetDefinition } from '../lib/harness.js';
import { describeMix, mixRequest, type EvmReadTargets, type MixPaths } from '../lib/real-call-mix.js';
import type { Scenario } from '../lib/scenario.js';

const scenario: Scenario = {
  name: 'http-instant',
  description: 'real JSON-RPC calls over HTTP to an instantly answering node: direct vs bare proxy vs fastify proxy vs Tollgate gateway',
  targets: ['direct', 'bare-proxy', 'hand-written', 'fastify-proxy', 'gateway', 'gateway-before'],

  async run(options: BenchOptions) {
    // The instant node answers whatever it is asked: any address and transaction hash will do.
    const reads: EvmReadTargets = { address: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48', transaction: '0x88df016429689c079f3b2f6ad39fa052532c56795b733da78a91ebe6a713944b' };
    const direct: MixPaths = { evm: '/', solana: '/' };
    if (options.baseline === undefined && options.targets?.includes('gateway-before') === true) throw new Error('the gateway-before target needs --baseline <dir>');
    const node = await startServer('instant-node', 'bench/servers/instant-node.ts', {}, { ...options, profile: false });
    try {
      const upstream = { upstream: node.url, connections: String(UPSTREAM_CONNECTIONS) };
      const gatewayPaths: MixPaths = { evm: `/${BENCH_NETWORK}/v3/${BENCH_KEY}`, solana: `/${BENCH_SOLANA_NETWORK}/v3/${BENCH_KEY}` };
      const proxied = (name: string, description: string, script: string, paths: MixPaths = direct, args: Record<string, string> = upstream, cwd?: string): TargetDefinition => ({
        name,
        description,
        async start() {
          const server = await startServer(name, script, args, options, cwd);
          return { url: server.url, request: mixRequest(paths, reads), serverPids: server.ready.pids, server };
        },
      });
      const gatewayArgs = { upstream: node.url, solana: node.url };
      const definitions: TargetDefinition[] = [
        {
          name: 'direct',
          description: 'the instant node itself (no proxy)',
          start: async () => ({ url: node.url, request: mixRequest(direct, reads), serverPids: node.ready.pids }),
        },
        proxied('bare-proxy', 'node:http + undici Pool, bytes in, bytes out', 'bench/servers/bare-proxy.ts'),
        proxied(
          'hand-written',
          'the spec\'s per-call work by hand, no framework (bench/hand-written-gateway.ts)',
          'bench/servers/hand-written-gateway.ts',
          gatewayPaths,
        ),
        proxied('fastify-proxy', 'fastify 5 + @fastify/http-proxy', 'bench/servers/fastify-proxy.ts'),
        proxied(
          'gateway',
          'Tollgate: httpTransport + evmFamily + solanaFamily, full pipeline, metered key',
          'bench/servers/gateway.ts',
          gatewayPaths,
          gatewayArgs,
        ),
        ...(options.baseline === undefined
          ? []
          : [proxied('gateway-before', `the same gateway built from ${options.baseline}`, 'bench/servers/gateway.ts', gatewayPaths, gatewayArgs, options.baseline)]),
      ];
      const outcome = await runTargets(
        definitions,
        [
          { numerator: 'gateway', denominator: 'bare-proxy', goal: 0.9 },
          { numerator: 'gateway', denominator: 'fastify-proxy', goal: 1.5 },
          { numerator: 'hand-written', denominator: 'bare-proxy' },
          { numerator: 'gateway', denominator: 'hand-written' },
          { numerator: 'gateway', denominator: 'direct' },
          ...(options.baseline === undefined ? [] : [{ numerator: 'gateway', denominator: 'gateway-before' }]),
        ],
        options,
        node.ready.pids,
      );
      return {
        scenario: scenario.name,
        description: scenario.description,
        ...outcome,
        notes: [
          `calls: ${describeMix(true)}`,
          `upstream: a Node server answering each method at once with a realistic body (a block with 120 transaction hashes, a receipt, logs, a token balance, a token account; ${node.url}), in its own process`,
          'compare CPU us/req of gateway and bare-proxy: the difference is what the pipeline costs per call',
        ],
      };
    } finally {
      await node.stop();
    }
  },
};

export default scenario;
