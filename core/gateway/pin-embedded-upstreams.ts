import { pino } from 'pino';
import type { GatewayConfig, GatewayConfigInput } from '../config/types.js';
import { resolveConfig } from '../config/load-config.js';
import { Tokens, type TollgatePlugin } from '../contracts/plugin.js';
import { EmbeddedUpstreams } from '../network/embedded-upstreams.js';
import { systemClock } from '../util/clock.js';
import { coreContainer } from './core-container.js';

/** A configuration whose embedded upstreams run, and how to stop them. */
export interface PinnedUpstreams {
  /** The configuration with every `embedded` upstream replaced by the `url` (and `wsUrl`) of its running instance. */
  readonly config: GatewayConfig;
  /** Stops every instance started. */
  stop(): Promise<void>;
}

/**
 * Starts the embedded upstreams a configuration names (`embedded: "kind#instance"`), once, with the
 * plugins that provide them, and returns the configuration pointing at them by URL. For several gateways
 * (worker processes) that must share one embedded node rather than start one each: the process that
 * owns the nodes pins them, and every gateway is built from the pinned configuration. Plugins are only
 * registered (bindings, no I/O) into a container of their own; nothing else of them starts. The keys'
 * secrets stay as given (a gateway built from the pinned configuration hashes them).
 *
 * @example
 * ```ts
 * const pinned = await pinEmbeddedUpstreams(config, [devnet()]);
 * // pinned.config.networks[0].upstreams[0].url === 'http://127.0.0.1:<port>'
 * await pinned.stop();
 * ```
 */
export async function pinEmbeddedUpstreams(input: GatewayConfigInput | GatewayConfig, plugins: readonly TollgatePlugin[]): Promise<PinnedUpstreams> {
  const config = resolveConfig(input);
  // A throwaway container, as a gateway's would be, so that plugins register exactly as they do in one.
  const container = coreContainer(resolveConfig(input), systemClock, pino({ level: 'silent' }));
  for (const plugin of plugins) plugin.register(container, config);
  const providers = container.isRegistered(Tokens.EmbeddedUpstream, true) ? container.resolveAll(Tokens.EmbeddedUpstream) : [];
  const embedded = new EmbeddedUpstreams(providers);
  try {
    for (const [n, network] of config.networks.entries()) {
      for (const [i, upstream] of network.upstreams.entries()) {
        if (upstream.embedded === undefined) continue;
        const { url, wsUrl } = await embedded.endpoint(network, upstream, `networks[${n}].upstreams[${i}]`);
        delete upstream.embedded;
        upstream.url = url;
        if (wsUrl !== undefined) upstream.wsUrl = wsUrl;
      }
    }
  } catch (error) {
    await embedded.stop();
    throw error;
  }
  return { config, stop: () => embedded.stop() };
}
