/**
 * Solana over HTTP: the reads a Solana dApp makes most (`getAccountInfo`, `getBalance`,
 * `getMultipleAccounts`, `getLatestBlockhash`, `getTransaction`) sent to the devnet's LiteSVM node
 * directly, through a bare node:http + undici proxy, and through the Tollgate gateway with its whole
 * pipeline (auth, validation, metering, routing, dispatch, context slots), in one run.
 */
import { BENCH_KEY, BENCH_SOLANA_NETWORK, UPSTREAM_CONNECTIONS } from '../config.js';
import { runTargets, startServer, type BenchOptions, type TargetDefinition } from '../lib/harness.js';
import { SOLANA_MIX_DESCRIPTION, solanaMixRequest, type SolanaReadTargets } from '../lib/solana-call-mix.js';
import type { Scenario } from '../lib/scenario.js';

/** Calls `method` on the node, for the scenario's set-up. */
async function call<T>(url: string, method: string, params: unknown[]): Promise<T> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  const answer = (await response.json()) as { result?: T; error?: { message: string } };
  if (answer.error !== undefined) throw new Error(`${method}: ${answer.error.message}`);
  return answer.result as T;
}

/** Funds two fresh accounts by airdrop and waits until the second airdrop is confirmed: what the mix reads. */
async function prepare(url: string): Promise<SolanaReadTargets> {
  const { Keypair } = await import('@solana/web3.js');
  const accounts = [Keypair.generate().publicKey.toBase58(), Keypair.generate().publicKey.toBase58()];
  let signature = '';
  for (const account of accounts) signature = await call<string>(url, 'requestAirdrop', [account, 1_000_000_000]);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { value } = await call<{ value: Array<{ confirmationStatus?: string } | null> }>(url, 'getSignatureStatuses', [[signature]]);
    if (value[0]?.confirmationStatus === 'confirmed' || value[0]?.confirmationStatus === 'finalized') break;
    if (Date.now() > deadline) throw new Error('the set-up airdrop was not confirmed within 30 s');
    // The node's slots move every 400 ms: asking again sooner learns nothing.
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return { accounts, signature };
}

const scenario: Scenario = {
  name: 'solana-http',
  description: 'real Solana reads over HTTP to the devnet LiteSVM node: direct vs bare proxy vs Tollgate gateway',
  targets: ['direct', 'bare-proxy', 'gateway'],

  async run(options: BenchOptions) {
    const node = await startServer('solana-node', 'bench/servers/solana-node.ts', {}, { ...options, profile: false });
    try {
      const reads = await prepare(node.url);
      const gatewayPath = `/${BENCH_SOLANA_NETWORK}/v3/${BENCH_KEY}`;
      const definitions: TargetDefinition[] = [
        {
          name: 'direct',
          description: 'the LiteSVM node itself (no proxy)',
          start: async () => ({ url: node.url, request: solanaMixRequest('/', reads), serverPids: node.ready.pids }),
        },
        {
          name: 'bare-proxy',
          description: 'node:http + undici Pool, bytes in, bytes out',
          async start() {
            const server = await startServer('bare-proxy', 'bench/servers/bare-proxy.ts', { upstream: node.url, connections: String(UPSTREAM_CONNECTIONS) }, options);
            return { url: server.url, request: solanaMixRequest('/', reads), serverPids: server.ready.pids, server };
          },
        },
        {
          name: 'gateway',
          description: 'Tollgate: httpTransport + solanaFamily, full pipeline, metered key',
          async start() {
            const server = await startServer('gateway', 'bench/servers/gateway.ts', { upstream: node.url, solana: node.url }, options);
            return { url: server.url, request: solanaMixRequest(gatewayPath, reads), serverPids: server.ready.pids, server };
          },
        },
      ];
      const outcome = await runTargets(
        definitions,
        [
          { numerator: 'gateway', denominator: 'bare-proxy', goal: 0.85 },
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
          `calls: ${SOLANA_MIX_DESCRIPTION}; POST to / (direct, proxy) and ${gatewayPath} (gateway)`,
          `upstream: the devnet's LiteSVM node (${node.url}) in its own process, slots every 400 ms; two accounts funded by airdrop and the airdrop's transaction are what the mix reads`,
          'req/s counts only 200 responses carrying a JSON-RPC result; latencies are over all responses',
        ],
      };
    } finally {
      await node.stop();
    }
  },
};

export default scenario;
