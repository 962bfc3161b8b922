/**
 * One embedded Solana upstream: a {@link LiteSvmNode}, seeded, behind its JSON-RPC server.
 *
 * @module
 */
import type { EmbeddedUpstreamInstance } from 'tollgate/upstream';
import { checkDevnetLayer, LITESVM_PROPERTIES, NETWORK_OPTIONS_SCHEMA } from '../devnet-settings.js';
import { LiteSvmNode, type LiteSvmNodeOptions } from './litesvm-node.js';
import { startLiteSvmServer, type LiteSvmServer } from './rpc-server.js';
import { seedSolana, type SolanaSeed } from './seed.js';

/** Settings of a `litesvm` instance: the node's options and whether to seed it. */
export interface LiteSvmSettings extends LiteSvmNodeOptions {
  /** Whether to write the seed accounts at startup (default true). */
  readonly seed?: boolean;
  /** The RPC port (code only; default a free one): a test restarting a stopped node gives its old port. */
  readonly port?: number;
}

/** A started `litesvm` upstream. */
export interface LiteSvmInstance extends EmbeddedUpstreamInstance {
  /** `litesvm#instance`, e.g. `litesvm#default`. */
  readonly id: string;
  /** Always `litesvm`. */
  readonly kind: 'litesvm';
  /** The JSON-RPC URL the gateway uses. */
  readonly url: string;
  /** The WebSocket (pubsub) URL: the same port as {@link url}. */
  readonly wsUrl: string;
  /** The WebSocket URL on `port + 1`, where agave serves pubsub (and web3.js looks by default), when that port was free. */
  readonly pubsubUrl: string | undefined;
  /** The VM and its slot clock (tests write accounts with `node.setAccount`). */
  readonly node: LiteSvmNode;
  /** The JSON-RPC server. */
  readonly server: LiteSvmServer;
  /** What was seeded (`undefined` with `seed: false`). */
  readonly seed: SolanaSeed | undefined;
  /**
   * What was seeded.
   *
   * @throws Error when this instance was started with `seed: false`.
   */
  getSeed(): SolanaSeed;
  /** Stops the slot timer and the server. Idempotent. */
  stop(): Promise<void>;
}

const KEYS = Object.keys(LITESVM_PROPERTIES) as ReadonlyArray<keyof typeof LITESVM_PROPERTIES>;

/**
 * Picks and checks the `litesvm` keys of a settings object (`devnet({ litesvm })`, the config's
 * `plugins.devnet`, a network's `options`) with Tollgate's settings validator; other keys belong to
 * other providers and are left alone. A `startSlot` given as a string becomes a bigint.
 *
 * @throws ConfigError naming each offending field under `where`.
 */
export function readLiteSvmSettings(where: string, source: Readonly<Record<string, unknown>> | undefined): LiteSvmSettings {
  const layer = checkDevnetLayer(NETWORK_OPTIONS_SCHEMA, where, source);
  const out: Record<string, unknown> = {};
  for (const key of KEYS) {
    const value = layer[key];
    if (value !== undefined) out[key] = key === 'startSlot' && typeof value === 'string' ? BigInt(value) : value;
  }
  return out as LiteSvmSettings;
}

/**
 * Starts a seeded LiteSVM node behind its HTTP and WebSocket JSON-RPC server: what tests and the
 * demo run against.
 *
 * @example
 * ```ts
 * const solana = await startLiteSvmInstance('litesvm#test', { slotMs: 50 });
 * const rpc = createSolanaRpc(solana.url);
 * const subscriptions = createSolanaRpcSubscriptions(solana.wsUrl);
 * // ...
 * await solana.stop();
 * ```
 */
export async function startLiteSvmInstance(id: string, settings: LiteSvmSettings = {}): Promise<LiteSvmInstance> {
  const node = new LiteSvmNode(settings);
  let server: LiteSvmServer;
  let seed: SolanaSeed | undefined;
  try {
    seed = settings.seed === false ? undefined : seedSolana(node);
    server = await startLiteSvmServer({ node, ...(settings.port === undefined ? {} : { port: settings.port }) });
  } catch (error) {
    node.stop();
    throw error;
  }
  let stopping: Promise<void> | undefined;
  return {
    id,
    kind: 'litesvm',
    url: server.url,
    wsUrl: server.wsUrl,
    pubsubUrl: server.pubsubUrl,
    node,
    server,
    seed,
    getSeed() {
      if (seed === undefined) throw new Error(`devnet ${id} was started with seed: false`);
      return seed;
    },
    stop() {
      stopping ??= (async () => {
        node.stop();
        await server.stop();
      })();
      return stopping;
    },
  };
}
