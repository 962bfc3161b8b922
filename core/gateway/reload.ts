import type { Logger } from 'pino';
import type { GatewayConfig, GatewayConfigInput } from '../config/types.js';
import { ConfigError, loadConfigFile, resolveConfig } from '../config/load-config.js';
import type { Network, NetworkFamily } from '../contracts/request-context.js';
import type { Upstream } from '../contracts/upstream.js';
import type { StageDependencies } from '../contracts/stage.js';
import type { EmbeddedUpstreams } from '../network/embedded-upstreams.js';
import { buildNetworks } from '../network/build-networks.js';
import { createNetworkRpc } from '../network/network-rpc.js';

/** What a reload swaps in: the state new calls see, built whole before anything changes. */
export interface ConfigGeneration {
  /** The new resolved configuration. */
  readonly config: GatewayConfig;
  /** The families, rebuilt for it where a family can be ({@link NetworkFamily.reconfigure}). */
  readonly families: ReadonlyMap<string, NetworkFamily>;
  /** The networks, with their new upstreams. */
  readonly networks: readonly Network[];
  /** The stage dependencies with the new configuration. */
  readonly deps: StageDependencies;
}

/** What the reloader needs of the gateway it reloads. */
export interface ReloaderOptions {
  /** The file the configuration came from, re-read when `reload()` is called without a configuration. */
  readonly configFile: string | undefined;
  /** The families as they are now. */
  readonly families: () => ReadonlyMap<string, NetworkFamily>;
  /** The stage dependencies as they are now. */
  readonly deps: () => StageDependencies;
  /** The embedded upstreams (started once, shared by every generation). */
  readonly embedded: EmbeddedUpstreams;
  /** Makes `generation` the one new calls use; calls in flight keep what they started with. */
  readonly swap: (generation: ConfigGeneration) => void;
  /** The gateway's logger. */
  readonly logger: Logger;
}

/** Reloads the configuration: from `input`, or from the file the gateway was started with. */
export type Reload = (input?: GatewayConfigInput) => Promise<GatewayConfig>;

/**
 * Builds a gateway's reload. A reload reads the configuration (the file again, or the given object) and
 * checks it as `createGateway` does, rebuilds every family that can be rebuilt for it (prices, limits,
 * opt-in namespaces) and every network with its upstreams, and only then swaps them in, at once, for
 * the calls that start afterwards. A call in flight, or a connection opened before (a WebSocket), keeps
 * the network, methods and upstreams it started with: nothing of the old generation is closed before
 * the gateway closes (idle keep-alive connections of retired upstreams time out by themselves).
 *
 * Any problem (an invalid file, a family's refused settings, an upstream that cannot be built) rejects
 * with the problems, as `tollgate config check` words them, and changes nothing. Reloads are serialized.
 */
export function createReloader(options: ReloaderOptions): { reload: Reload; retired: () => readonly Upstream[] } {
  const retired: Upstream[] = [];
  let queue: Promise<unknown> = Promise.resolve();

  const run = async (input: GatewayConfigInput | undefined): Promise<GatewayConfig> => {
    let config: GatewayConfig;
    if (input !== undefined) config = resolveConfig(input);
    else if (options.configFile !== undefined) config = await loadConfigFile(options.configFile);
    else throw new ConfigError(['the gateway was not started from a file: give reload() the configuration']);
    const families = new Map<string, NetworkFamily>();
    for (const [name, family] of options.families()) families.set(name, family.reconfigure?.(config) ?? family);
    const deps: StageDependencies = { ...options.deps(), config };
    const built = await buildNetworks(config, families, options.embedded, createNetworkRpc(deps));
    options.swap({ config, families, networks: built.networks, deps });
    retired.push(...built.upstreams);
    options.logger.info({ networks: built.networks.map((n) => n.name) }, 'configuration reloaded');
    return config;
  };

  return {
    reload(input) {
      const next = queue.then(() => run(input));
      queue = next.catch(() => undefined);
      return next;
    },
    // Every upstream ever built by a reload: closed with the gateway (the first generation's are closed by startup's own list).
    retired: () => retired,
  };
}
