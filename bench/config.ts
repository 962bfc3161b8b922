/**
 * The gateway configuration the bench measures: one network in front of the bench's upstream, one key on
 * a plan that metering never refuses (so every call runs the whole pipeline, including the debit, and
 * none is turned away), logs off.
 */
import type { GatewayConfigInput } from '../core/index.js';

/** The network the bench addresses: `POST /<BENCH_NETWORK>/v3/<BENCH_KEY>`. */
export const BENCH_NETWORK = 'eth';

/** The Solana network of the scenarios whose node answers Solana calls (`http-instant`). */
export const BENCH_SOLANA_NETWORK = 'sol';

/** The bench's API key. */
export const BENCH_KEY = 'bench-key-0123456789';

/** Keep-alive connections to the upstream, the same for every proxy in the comparison. */
export const UPSTREAM_CONNECTIONS = 64;

/**
 * The gateway config for an upstream at `upstreamUrl`; with `solanaUrl`, a second network,
 * {@link BENCH_SOLANA_NETWORK}, in front of that Solana node (and its WebSocket, `solanaWsUrl`, for subscriptions).
 */
export function benchGatewayConfig(upstreamUrl: string, upstreamWsUrl?: string, solanaUrl?: string, solanaWsUrl?: string): GatewayConfigInput {
  return {
    server: { host: '127.0.0.1', port: 0 },
    log: { level: 'silent' },
    plans: { bench: { dailyCredits: 1e12, creditsPerSecond: 1e9, failover: false } },
    keys: [{ key: BENCH_KEY, plan: 'bench' }],
    networks: [
      { name: BENCH_NETWORK, families: ['evm'], upstreams: [{ url: upstreamUrl, ...(upstreamWsUrl === undefined ? {} : { wsUrl: upstreamWsUrl }) }] },
      ...(solanaUrl === undefined ? [] : [{ name: BENCH_SOLANA_NETWORK, families: ['solana'], upstreams: [{ url: solanaUrl, ...(solanaWsUrl === undefined ? {} : { wsUrl: solanaWsUrl }) }] }]),
    ],
    upstreamDefaults: { connections: UPSTREAM_CONNECTIONS },
  };
}
