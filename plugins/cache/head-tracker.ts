import type { Logger } from 'pino';
import type { ChainHead, FamilyCachePolicies, NetworkRuntime } from '../../core/family-api.js';

/** Recent heights whose hash is remembered to recognise a reorg. */
const REMEMBERED_BLOCKS = 256;

/** What a tracker tells the cache. */
export interface HeadEvents {
  /** The chain reorganised: the unfinalized answers of the network may be wrong. The read waits for it. */
  onReorg(network: string, from: ChainHead, to: ChainHead): void | Promise<void>;
}

/**
 * Follows one network's head by asking its upstreams (the family's `readHead`) every `intervalMs`, and
 * recognises a reorg: a new head at a height already seen with another hash, a head whose parent is not
 * the block seen at the height below, a head lower than the last one (a chain rewound), or, when the head
 * skipped heights, a last head no longer on the chain.
 *
 * Until the first read succeeds, and after a read fails, the head is unknown and nothing that depends on
 * it is cached (a blind cache would keep answers past a reorg it cannot see).
 */
export class HeadTracker {
  readonly #network: NetworkRuntime;
  readonly #read: (network: NetworkRuntime) => Promise<ChainHead>;
  readonly #readHash: ((network: NetworkRuntime, height: number) => Promise<string | undefined>) | undefined;
  readonly #events: HeadEvents;
  readonly #logger: Logger;
  readonly #hashes = new Map<number, string>();
  #head: ChainHead | undefined;
  /** The last head read, kept while reads fail, so a reorg during an outage is still recognised. */
  #lastSeen: ChainHead | undefined;
  #timer: NodeJS.Timeout | undefined;
  #reading: Promise<ChainHead | undefined> | undefined;
  #stopped = false;

  constructor(network: NetworkRuntime, policies: Required<Pick<FamilyCachePolicies, 'readHead'>> & FamilyCachePolicies, events: HeadEvents, logger: Logger) {
    this.#network = network;
    this.#read = policies.readHead;
    this.#readHash = policies.readBlockHash;
    this.#events = events;
    this.#logger = logger;
  }

  /** The head as last read, or undefined when unknown. */
  get head(): ChainHead | undefined {
    return this.#head;
  }

  /** Reads the head now (a read already running is shared) and returns it; reorgs are reported first. */
  refresh(): Promise<ChainHead | undefined> {
    this.#reading ??= this.#readOnce().finally(() => (this.#reading = undefined));
    return this.#reading;
  }

  /** Reads the head once, then every `intervalMs` until `stop`. */
  async start(intervalMs: number): Promise<void> {
    await this.refresh();
    if (this.#stopped) return;
    this.#timer = setInterval(() => void this.refresh(), intervalMs);
    this.#timer.unref();
  }

  /** Stops reading. */
  stop(): void {
    this.#stopped = true;
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  async #readOnce(): Promise<ChainHead | undefined> {
    let next: ChainHead;
    let reorganised = false;
    try {
      next = await this.#read(this.#network);
      const last = this.#lastSeen;
      // The new head skipped heights: the last head seen must still be on the chain it extends.
      if (last !== undefined && next.number > last.number + 1 && this.#readHash !== undefined) {
        reorganised = (await this.#readHash(this.#network, last.number)) !== last.hash;
      }
    } catch (error) {
      if (this.#head !== undefined) this.#logger.warn({ network: this.#network.name, err: error }, 'cache: the head could not be read; head-bound answers are not cached until it can');
      this.#head = undefined;
      return undefined;
    }
    const last = this.#lastSeen;
    if (last !== undefined && (reorganised || this.#reorganised(last, next))) {
      this.#hashes.clear();
      this.#logger.info({ network: this.#network.name, from: last.number, to: next.number }, 'cache: chain reorganised, unfinalized answers dropped');
      await this.#events.onReorg(this.#network.name, last, next);
    }
    this.#head = next;
    this.#lastSeen = next;
    this.#hashes.set(next.number, next.hash);
    if (next.number > 0) this.#hashes.set(next.number - 1, next.parentHash);
    for (const height of this.#hashes.keys()) if (height < next.number - REMEMBERED_BLOCKS) this.#hashes.delete(height);
    return next;
  }

  #reorganised(last: ChainHead, next: ChainHead): boolean {
    if (next.number < last.number) return true;
    const seen = this.#hashes.get(next.number);
    if (seen !== undefined && seen !== next.hash) return true;
    const parent = this.#hashes.get(next.number - 1);
    return parent !== undefined && parent !== next.parentHash;
  }
}
