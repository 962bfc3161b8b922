import type { GatewayConfig } from '../config/types.js';
import type { NetworkFamily } from '../contracts/request-context.js';
import type { Network } from '../contracts/request-context.js';
import type { Upstream } from '../contracts/upstream.js';
import { ConfiguredNetwork, type NetworkRpc } from './network.js';
import { PooledUpstream } from '../upstream/upstream.js';
import type { EmbeddedUpstreams } from './embedded-upstreams.js';
import { PluginError } from '../plugin/plugin-error.js';
import { ConfigError } from '../config/load-config.js';
import { protectedNamespaces, unknownMethodsProblems } from '../config/unknown-methods.js';

/** The networks of a config with their upstream pools, and every pool (to close them). */
export interface BuiltNetworks {
  readonly networks: Network[];
  readonly upstreams: Upstream[];
}

/**
 * Builds every configured network from its families and upstreams, starting embedded upstreams as
 * they are named; every network's `rpc` is `rpc`. On failure, closes the pools it opened (the caller stops the embedded upstreams).
 */
export async function buildNetworks(config: GatewayConfig, families: ReadonlyMap<string, NetworkFamily>, embedded: EmbeddedUpstreams, rpc: NetworkRpc): Promise<BuiltNetworks> {
  const upstreams: Upstream[] = [];
  try {
    const networks = await Promise.all(
      config.networks.map(async (networkConfig, n) => {
        const networkFamilies = networkConfig.families.map((name, f) => {
          const family = families.get(name);
          if (family === undefined) throw new PluginError(`networks[${n}].families[${f}]: no plugin provides network family "${name}"`);
          return family;
        });
        // Checked when the gateway is assembled too; again here for a reload, whose families may have changed.
        const forwarding = unknownMethodsProblems(networkConfig.unknownMethods, protectedNamespaces(networkFamilies), `networks[${n}].unknownMethods`);
        if (forwarding.length > 0) throw new ConfigError(forwarding);
        const networkUpstreams = await Promise.all(
          networkConfig.upstreams.map(async (u, i) => {
            const { url, wsUrl } = await embedded.endpoint(networkConfig, u, `networks[${n}].upstreams[${i}]`);
            const upstream = new PooledUpstream({
              name: u.name ?? `${networkConfig.name}-${u.role ?? 'primary'}-${i + 1}`,
              network: networkConfig.name,
              url,
              wsUrl,
              role: u.role ?? 'primary',
              headers: u.headers ?? {},
              timeoutMs: u.timeoutMs ?? config.upstreamDefaults.timeoutMs,
              connectTimeoutMs: config.upstreamDefaults.connectTimeoutMs,
              connections: u.connections ?? config.upstreamDefaults.connections,
              weight: u.weight ?? 1,
              budget: u.budget,
              keepAliveTimeoutMs: config.upstreamDefaults.keepAliveTimeoutMs,
            });
            upstreams.push(upstream);
            return upstream;
          }),
        );
        return new ConfiguredNetwork(networkConfig, networkFamilies, networkUpstreams, rpc);
      }),
    );
    return { networks, upstreams };
  } catch (error) {
    await Promise.allSettled(upstreams.map((u) => u.close()));
    throw error;
  }
}
