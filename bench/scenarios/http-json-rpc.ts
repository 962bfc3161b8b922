/**
 * HTTP JSON-RPC: the same calls (the real-call mix of `bench/lib/real-call-mix.ts`: blocks, `eth_call`,
 * receipts, logs) sent to one Anvil directly, through a bare node:http + undici proxy, through fastify +
 * @fastify/http-proxy, and through the Tollgate gateway with its whole pipeline (auth, validation,
 * metering, routing, dispatch).
 */
import { BENCH_KEY, BENCH_NETWORK, UPSTREAM_CONNECTIONS } from '../config.js';
import { startAnvil } from '@tollgate/devnet';
import { runTargets, startServer, type BenchOptions, type TargetDefinition } from '../lib/harness.js';
import { anvilReadTargets, describeMix, mixRequest } from '../lib/real-call-mix.js';
import type { Scenario } from '../lib/scenario.js';

const scenario: Scenario = {
  name: 'http-json-rpc',
  description: 'real JSON-RPC calls over HTTP: Anvil direct vs bare proxy vs fastify proxy vs Tollgate gateway',
  targets: ['direct', 'bare-proxy', 'fastify-proxy', 'gateway', 'gateway-before'],

  async run(options: BenchOptions) {
    const anvil = await startAnvil();
    try {
      const reads = await anvilReadTargets(anvil.url);
      const direct = mixRequest({ evm: '/' }, reads);
      const upstream = { upstream: anvil.url, connections: String(UPSTREAM_CONNECTIONS) };
      const proxied = (name: string, description: string, script: string): TargetDefinition => ({
        name,
        description,
        async start() {
          const server = await startServer(name, script, upstream, options);
          return { url: server.url, request: direct, serverPids: server.ready.pids, server };
        },
      });
      if (options.baseline === undefined && options.targets?.includes('gateway-before') === true) throw new Error('the gateway-before target needs --baseline <dir>');
      const gateway = (name: string, description: string, cwd?: string): TargetDefinition => ({
        name,
        description,
        async start() {
          const server = await startServer(name, 'bench/servers/gateway.ts', { upstream: anvil.url }, options, cwd);
          return { url: server.url, request: mixRequest({ evm: `/${BENCH_NETWORK}/v3/${BENCH_KEY}` }, reads), serverPids: server.ready.pids, server };
        },
      });
      const definitions: TargetDefinition[] = [
        {
          name: 'direct',
          description: 'Anvil itself (the upstream, no proxy)',
          start: async () => ({ url: anvil.url, request: direct, serverPids: [anvil.pid] }),
        },
        proxied('bare-proxy', 'node:http + undici Pool, bytes in, bytes out', 'bench/servers/bare-proxy.ts'),
        proxied('fastify-proxy', 'fastify 5 + @fastify/http-proxy', 'bench/servers/fastify-proxy.ts'),
        gateway('gateway', 'Tollgate: httpTransport + evmFamily, full pipeline, metered key'),
        ...(options.baseline === undefined ? [] : [gateway('gateway-before', `the same gateway built from ${options.baseline}`, options.baseline)]),
      ];
      const outcome = await runTargets(
        definitions,
        [
          { numerator: 'gateway', denominator: 'fastify-proxy', goal: 1.0 },
          { numerator: 'gateway', denominator: 'bare-proxy', goal: 0.9 },
          { numerator: 'gateway', denominator: 'direct' },
          ...(options.baseline === undefined ? [] : [{ numerator: 'gateway', denominator: 'gateway-before' }]),
        ],
        options,
        [anvil.pid],
      );
      return {
        scenario: scenario.name,
        description: scenario.description,
        ...outcome,
        notes: [
          `calls: ${describeMix(false)}; POST to / (direct, proxies) and /${BENCH_NETWORK}/v3/<key> (gateway)`,
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
