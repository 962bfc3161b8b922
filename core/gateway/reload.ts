import type { Logger } from 'pino';
import type { GatewayConfig, GatewayConfigInput } from '../config/types.js';
import { ConfigError, loadConfigFile, resolveConfig } from '../config/load-config.js';
import type { NetworkFamily } from '../contracts/request-context.js';
import type { Generation } from './generation.js';

/** What the reloader needs of the gateway it reloads. */
export interface ReloaderOptions {
  /** The file the configuration came from, re-read when `reload()` is called without a configuration. */
  readonly configFile: string | undefined;
  /** The generation new calls use now. */
  readonly current: () => Generation;
  /** Builds a generation: the same build as startup's. */
  readonly build: (config: GatewayConfig, families: ReadonlyMap<string, NetworkFamily>) => Promise<Generation>;
  /** Makes `next` the one new calls use and retires the one it replaces. */
  readonly swap: (next: Generation) => void;
  /** The gateway's logger. */
  readonly logger: Logger;
}

/** Reloads the configuration: from `input`, or from the file the gateway was started with. */
export type Reload = (input?: GatewayConfigInput) => Promise<GatewayConfig>;

/**
 * Builds a gateway's reload. A reload reads the configuration (the file again, or the given object) and
 * checks it as `createGateway` does, builds a new generation with every family rebuilt for it where it
 * can be (prices, limits, opt-in namespaces), and only then swaps it in, at once, for the calls that
 * start afterwards. A call in flight, or a connection opened before (a WebSocket), keeps the network,
 * methods and upstreams it started with; the retired generation's upstreams close once those end.
 *
 * Any problem (an invalid file, a family's refused settings, an upstream that cannot be built) rejects
 * with the problems, as `tollgate config check` words them, and changes nothing. Reloads are serialized.
 */
export function createReloader(options: ReloaderOptions): Reload {
  let queue: Promise<unknown> = Promise.resolve();

  const run = async (input: GatewayConfigInput | undefined): Promise<GatewayConfig> => {
    let config: GatewayConfig;
    if (input !== undefined) config = resolveConfig(input);
    else if (options.configFile !== undefined) config = await loadConfigFile(options.configFile);
    else throw new ConfigError(['the gateway was not started from a file: give reload() the configuration']);
    const families = new Map<string, NetworkFamily>();
    for (const [name, family] of options.current().families) families.set(name, family.reconfigure?.(config) ?? family);
    const next = await options.build(config, families);
    options.swap(next);
    options.logger.info({ networks: next.networks.map((n) => n.name) }, 'configuration reloaded');
    return config;
  };

  return (input) => {
    const next = queue.then(() => run(input));
    queue = next.catch(() => undefined);
    return next;
  };
}
