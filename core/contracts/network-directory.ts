// The directory of a gateway's networks, as plugins and transports look a request's network up in it.
import type { Network } from './request-context.js';

/** Where a request was addressed: the network, and the rest of the path after the network's prefix. */
export interface AddressedNetwork {
  /** The network. */
  readonly network: Network;
  /** The path after the network's prefix, starting with `/`. */
  readonly rest: string;
}

/**
 * The gateway's networks, found by name or by the host and path a request was sent to (host name first,
 * then the longest matching path prefix).
 */
export interface NetworkDirectory {
  /** Every network, in configuration order. */
  readonly all: Network[];
  /** The network named `name`, if any. */
  get(name: string): Network | undefined;
  /** The network `host` and `path` address, and the rest of the path after its prefix. */
  resolve(host: string | undefined, path: string): AddressedNetwork | undefined;
}
