import type { Network } from '../contracts/request-context.js';
import type { Upstream } from '../contracts/upstream.js';

/**
 * The upstreams of one generation and what still runs on them: calls started on the generation's
 * networks, and the requests and sockets that arrived while it was the current one. Once the
 * generation is retired (a reload replaced it) and nothing runs on it any more, its upstreams are
 * closed, exactly once: a config-management loop that reloads every minute keeps one generation's
 * pools open, plus those that still serve a call or a socket.
 */
export class UpstreamDrain {
  readonly #upstreams: readonly Upstream[];
  readonly #onClose: () => void;
  #running = 0;
  #retired = false;
  #closed: Promise<void> | undefined;

  constructor(upstreams: readonly Upstream[], onClose: () => void = () => {}) {
    this.#upstreams = upstreams;
    this.#onClose = onClose;
  }

  /** Something starts on the generation (a call, a request, a socket); {@link leave} when it ends. */
  enter(): void {
    this.#running++;
  }

  /** Something that {@link enter}ed ended; the last one out of a retired generation closes it. */
  leave(): void {
    this.#running--;
    if (this.#running === 0 && this.#retired) void this.close();
  }

  /** The generation serves no new work: its upstreams close as soon as nothing runs on it. */
  retire(): void {
    this.#retired = true;
    if (this.#running === 0) void this.close();
  }

  /** Closes the upstreams now, whatever still runs (the gateway closes); idempotent. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      this.#onClose();
      await Promise.allSettled(this.#upstreams.map((u) => u.close()));
    })();
    return this.#closed;
  }
}

/**
 * Every generation's drain not yet closed, and which generation a network belongs to (a call holds the
 * generation of the network it runs on, which a connection opened before a reload keeps).
 */
export class Drains {
  readonly #open = new Set<UpstreamDrain>();
  readonly #owners = new WeakMap<Network, UpstreamDrain>();

  /** A drain for a new generation's networks and upstreams, known here until it closes. */
  adopt(networks: readonly Network[], upstreams: readonly Upstream[]): UpstreamDrain {
    const drain: UpstreamDrain = new UpstreamDrain(upstreams, () => this.#open.delete(drain));
    this.#open.add(drain);
    for (const network of networks) this.#owners.set(network, drain);
    return drain;
  }

  /** The drain of the generation `network` was built by, if a generation built it. */
  ownerOf(network: Network): UpstreamDrain | undefined {
    return this.#owners.get(network);
  }

  /** Generations whose upstreams are still open (the current one included). */
  get open(): number {
    return this.#open.size;
  }

  /** Closes every generation still open (the gateway closes). */
  async closeAll(): Promise<void> {
    await Promise.allSettled([...this.#open].map((drain) => drain.close()));
  }
}
