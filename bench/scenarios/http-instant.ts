/**
 * HTTP JSON-RPC against an upstream that answers instantly (`bench/servers/instant-node.ts`), so the
 * node is never the bottleneck and each target's own cost shows: the bare proxy, fastify's proxy and the
 * Tollgate gateway with its whole pipeline, side by side in one run.
 */
import { BENCH_KEY, BENCH_NETWORK, UPSTREAM_CONNECTIONS } from '../config.js';
import { runTargets, startServer, type BenchOptions, type TargetDefinition } from '../lib/harness.js';
import { checkBenchMethod, jsonRpcRequest } from '../lib/json-rpc-request.js';
import type { Scenario } from '../lib/scenario.js';

const scenario: Scenario = {
  name: 'http-instant',
  description: 'one JSON-RPC call over HTTP to an instantly answering node: direct vs bare proxy vs fastify proxy vs Tollgate gateway',
  targets: ['direct', 'bare-proxy', 'fastify-proxy', 'gateway'],

  async run(options: BenchOptions) {
    checkBenchMethod(options.method);
    const node = await startServer('instant-node', 'bench/servers/instant-node.ts', {}, { ...options, profile: false });
    try {
      const upstream = { upstream: node.url, connections: String(UPSTREAM_CONNECTIONS) };
      const proxied = (name: string, description: string, script: string, path = '/', args: Record<string, string> = upstream): TargetDefinition => ({
        name,
        description,
        async start() {
          const server = await startServer(name, script, args, options);
          return { url: server.url, request: jsonRpcRequest(options.method, path), serverPids: server.ready.pids, server };
        },
      });
      const definitions: TargetDefinition[] = [
        {
          name: 'direct',
          description: 'the instant node itself (no proxy)',
          start: async () => ({ url: node.url, request: jsonRpcRequest(options.method, '/'), serverPids: node.ready.pids }),
        },
        proxied('bare-proxy', 'node:http + undici Pool, bytes in, bytes out', 'bench/servers/bare-proxy.ts'),
        proxied('fastify-proxy', 'fastify 5 + @fastify/http-proxy', 'bench/servers/fastify-proxy.ts'),
        proxied('gateway', 'Tollgate: httpTransport + evmFamily, full pipeline, metered key', 'bench/servers/gateway.ts', `/${BENCH_NETWORK}/v3/${BENCH_KEY}`, { upstream: node.url }),
      ];
      const outcome = await runTargets(
        definitions,
        [
          { numerator: 'gateway', denominator: 'bare-proxy', goal: 0.85 },
          { numerator: 'gateway', denominator: 'fastify-proxy', goal: 1.5 },
          { numerator: 'gateway', denominator: 'direct' },
        ],
        options,
        node.ready.pids,
      );
      return {
        scenario: scenario.name,
        description: scenario.description,
        ...outcome,
        notes: [
          `upstream: a Node server answering {"jsonrpc":"2.0","id":<id>,"result":"0x7a69"} at once (${node.url}), in its own process`,
          'compare CPU us/req of gateway and bare-proxy: the difference is what the pipeline costs per call',
        ],
      };
    } finally {
      await node.stop();
    }
  },
};

export default scenario;
