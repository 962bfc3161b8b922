/**
 * HTTP JSON-RPC: the same single call (`eth_chainId` by default), with the same body, sent to one Anvil
 * directly, through a bare node:http + undici proxy, through fastify + @fastify/http-proxy, and through
 * the Tollgate gateway with its whole pipeline (auth, validation, metering, routing, dispatch).
 */
import { BENCH_KEY, BENCH_NETWORK, UPSTREAM_CONNECTIONS } from '../config.js';
import { startAnvil } from '@tollgate/devnet';
import { runTargets, startServer, type BenchOptions, type TargetDefinition } from '../lib/harness.js';
import { checkBenchMethod, jsonRpcRequest } from '../lib/json-rpc-request.js';
import type { Scenario } from '../lib/scenario.js';

const scenario: Scenario = {
  name: 'http-json-rpc',
  description: 'one JSON-RPC call over HTTP: Anvil direct vs bare proxy vs fastify proxy vs Tollgate gateway',
  targets: ['direct', 'bare-proxy', 'fastify-proxy', 'gateway'],

  async run(options: BenchOptions) {
    checkBenchMethod(options.method);
    const anvil = await startAnvil();
    try {
      const upstream = { upstream: anvil.url, connections: String(UPSTREAM_CONNECTIONS) };
      const proxied = (name: string, description: string, script: string): TargetDefinition => ({
        name,
        description,
        async start() {
          const server = await startServer(name, script, upstream, options);
          return { url: server.url, request: jsonRpcRequest(options.method, '/'), serverPids: server.ready.pids, server };
        },
      });
      const definitions: TargetDefinition[] = [
        {
          name: 'direct',
          description: 'Anvil itself (the upstream, no proxy)',
          start: async () => ({ url: anvil.url, request: jsonRpcRequest(options.method, '/'), serverPids: [anvil.pid] }),
        },
        proxied('bare-proxy', 'node:http + undici Pool, bytes in, bytes out', 'bench/servers/bare-proxy.ts'),
        proxied('fastify-proxy', 'fastify 5 + @fastify/http-proxy', 'bench/servers/fastify-proxy.ts'),
        {
          name: 'gateway',
          description: 'Tollgate: httpTransport + evmFamily, full pipeline, metered key',
          async start() {
            const server = await startServer('gateway', 'bench/servers/gateway.ts', { upstream: anvil.url }, options);
            return { url: server.url, request: jsonRpcRequest(options.method, `/${BENCH_NETWORK}/v3/${BENCH_KEY}`), serverPids: server.ready.pids, server };
          },
        },
      ];
      const outcome = await runTargets(
        definitions,
        [
          { numerator: 'gateway', denominator: 'fastify-proxy', goal: 1.0 },
          { numerator: 'gateway', denominator: 'bare-proxy', goal: 0.85 },
          { numerator: 'gateway', denominator: 'direct' },
        ],
        options,
        [anvil.pid],
      );
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: options.method, params: [] });
      return {
        scenario: scenario.name,
        description: scenario.description,
        ...outcome,
        notes: [
          `request: POST ${body} (${Buffer.byteLength(body)} bytes) to / (direct, proxies) and /${BENCH_NETWORK}/v3/<key> (gateway)`,
          `upstream: one Anvil (${anvil.url}) shared by all targets; each proxy and the gateway keep up to ${UPSTREAM_CONNECTIONS} keep-alive connections to it`,
          'req/s counts only 200 responses carrying a JSON-RPC result; latencies are over all responses',
        ],
      };
    } finally {
      await anvil.stop();
    }
  },
};

export default scenario;
