import type { Network } from '../contracts/request-context.js';
import type { AddressedNetwork, NetworkDirectory as Directory } from '../contracts/network-directory.js';

/**
 * Finds the network a request addresses, by host name first and then by the longest matching path
 * prefix, so one gateway can serve `eth.example.com/v3/KEY` and `example.com/eth/v3/KEY` alike.
 */
export class NetworkDirectory implements Directory {
  readonly #byName = new Map<string, Network>();
  readonly #byHost = new Map<string, Network>();
  // Each prefix with its slash, so matching a request builds no string.
  readonly #prefixes: Array<{ prefix: string; slashed: string; network: Network }> = [];

  constructor(networks: readonly Network[]) {
    for (const network of networks) {
      this.#byName.set(network.name, network);
      for (const host of network.config.base?.hosts ?? []) this.#byHost.set(host.toLowerCase(), network);
      const path = network.config.base?.path ?? (network.config.base?.hosts !== undefined ? undefined : `/${network.name}`);
      if (path !== undefined) {
        const prefix = path === '/' ? '' : path.replace(/\/$/, '');
        this.#prefixes.push({ prefix, slashed: `${prefix}/`, network });
      }
    }
    this.#prefixes.sort((a, b) => b.prefix.length - a.prefix.length);
  }

  /** Every network. */
  get all(): Network[] {
    return [...this.#byName.values()];
  }

  /** The network named `name`. */
  get(name: string): Network | undefined {
    return this.#byName.get(name);
  }

  /** The network addressed by `host` (a Host header, port allowed) and `path` (query allowed). */
  resolve(host: string | undefined, path: string): AddressedNetwork | undefined {
    const query = path.indexOf('?');
    const bare = query === -1 ? path : path.slice(0, query);
    if (host !== undefined && this.#byHost.size > 0) {
      const name = host.replace(/:\d+$/, '').toLowerCase();
      const network = this.#byHost.get(name);
      if (network !== undefined) return { network, rest: bare };
    }
    for (const { prefix, slashed, network } of this.#prefixes) {
      if (prefix === '' || bare === prefix || bare.startsWith(slashed)) return { network, rest: bare.slice(prefix.length) || '/' };
    }
    return undefined;
  }
}
