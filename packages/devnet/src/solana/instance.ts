/**
 * One embedded Solana upstream: a {@link LiteSvmNode}, seeded, behind its JSON-RPC server.
 *
 * @module
 */
import { PluginError, type EmbeddedUpstreamInstance } from 'tollgate';
import { LiteSvmNode, type LiteSvmNodeOptions } from './litesvm-node.js';
import { startLiteSvmServer, type LiteSvmServer } from './rpc-server.js';
import { seedSolana, type SolanaSeed } from './seed.js';

/** Settings of a `litesvm` instance: the node's options and whether to seed it. */
export interface LiteSvmSettings extends LiteSvmNodeOptions {
  /** Whether to write the seed accounts at startup (default true). */
  readonly seed?: boolean;
}

/** A started `litesvm` upstream. */
export interface LiteSvmInstance extends EmbeddedUpstreamInstance {
  /** `litesvm#instance`, e.g. `litesvm#default`. */
  readonly id: string;
  /** Always `litesvm`. */
  readonly kind: 'litesvm';
  /** The JSON-RPC URL the gateway uses. */
  readonly url: string;
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

const KEYS = ['slotMs', 'startSlot', 'confirmedLag', 'finalizedLag', 'version', 'identitySeed', 'seed'] as const;

/**
 * Picks and checks the `litesvm` keys of a settings object (`devnet({ litesvm })`, the config's
 * `plugins.devnet`, a network's `options`); other keys belong to other providers and are ignored.
 */
export function readLiteSvmSettings(where: string, source: Readonly<Record<string, unknown>> | undefined): LiteSvmSettings {
  const out: Record<string, unknown> = {};
  if (source === undefined) return out;
  for (const key of KEYS) {
    const value = source[key];
    if (value === undefined) continue;
    const fail = (what: string): never => { throw new PluginError(`${where}.${key}: must be ${what}`); };
    if (key === 'seed') { if (typeof value !== 'boolean') fail('true or false'); }
    else if (key === 'version' || key === 'identitySeed') { if (typeof value !== 'string' || value === '') fail('a non-empty string'); }
    else if (key === 'startSlot') { if (!(typeof value === 'bigint' ? value >= 0n : Number.isSafeInteger(value) && (value as number) >= 0)) fail('a non-negative integer'); }
    else if (!Number.isSafeInteger(value) || (value as number) < 0) fail('a non-negative integer');
    out[key] = value;
  }
  return out as LiteSvmSettings;
}

/** Starts a node (seeded unless `seed: false`) and its server on a free 127.0.0.1 port. */
export async function startLiteSvmInstance(id: string, settings: LiteSvmSettings = {}): Promise<LiteSvmInstance> {
  const node = new LiteSvmNode(settings);
  let server: LiteSvmServer;
  let seed: SolanaSeed | undefined;
  try {
    seed = settings.seed === false ? undefined : seedSolana(node);
    server = await startLiteSvmServer({ node });
  } catch (error) {
    node.stop();
    throw error;
  }
  let stopping: Promise<void> | undefined;
  return {
    id,
    kind: 'litesvm',
    url: server.url,
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
