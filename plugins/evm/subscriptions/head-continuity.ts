/**
 * Keeps a `newHeads` stream continuous when it moves between nodes.
 *
 * @module
 */
import type { StreamAsk, StreamContinuity } from '../../../core/family-api.js';

/** A block header as `newHeads` sends it (only the fields read here). */
interface Head {
  readonly number: string;
  readonly hash: string;
}

/** Block headers remembered to tell a repeat from a reorg. */
const REMEMBERED = 256;

/** Members of a block object that a header does not have (geth's `newHeads` sends the header only). */
const BODY_FIELDS = ['transactions', 'uncles', 'size', 'totalDifficulty', 'withdrawals'] as const;

/**
 * A block from `eth_getBlockByNumber` as `newHeads` would have sent it: with the members a live event
 * of the node had (`shape`: nodes differ, geth sends the header, Anvil the whole block), else geth's header.
 */
export function headerOf(block: Record<string, unknown>, shape?: readonly string[]): Record<string, unknown> {
  if (shape !== undefined) return Object.fromEntries(shape.filter((k) => k in block).map((k) => [k, block[k]]));
  const header = { ...block };
  for (const field of BODY_FIELDS) delete header[field];
  return header;
}

/**
 * Every block number once, in order, across a change of node: a head more than one above the last
 * delivered fills the blocks between from the serving node's history; a head at or below it is
 * dropped when its hash is the one already delivered at that height, and delivered (a reorg, as geth
 * delivers one) when it differs. A gap larger than `maxGap` blocks delivers only its last `maxGap`.
 */
export class HeadContinuity implements StreamContinuity {
  readonly #maxGap: number;
  #last: number | undefined;
  readonly #hashes = new Map<number, string>();
  /** The members of the node's live events, so filled heads look the same. */
  #shape: string[] | undefined;

  constructor(maxGap: number) {
    this.#maxGap = maxGap;
  }

  next(result: unknown, ask: StreamAsk): readonly unknown[] | Promise<readonly unknown[]> {
    const head = result as Head;
    this.#shape ??= Object.keys(result as object);
    const number = Number.parseInt(head.number, 16);
    const last = this.#last;
    if (last === undefined || number === last + 1) return this.#take(number, head.hash, [result]);
    if (number <= last) {
      if (this.#hashes.get(number) === head.hash) return [];
      for (const n of this.#hashes.keys()) if (n > number) this.#hashes.delete(n);
      return this.#take(number, head.hash, [result]);
    }
    return this.#fill(last + 1, number - 1, ask).then((filled) => this.#take(number, head.hash, [...filled, result]));
  }

  async resumed(ask: StreamAsk): Promise<readonly unknown[]> {
    if (this.#last === undefined) return [];
    const head = Number.parseInt((await ask('eth_blockNumber', [])) as string, 16);
    if (!(head > this.#last)) return [];
    const filled = await this.#fill(this.#last + 1, head, ask);
    const top = filled[filled.length - 1] as Head | undefined;
    return top === undefined ? [] : this.#take(head, top.hash, filled);
  }

  async #fill(from: number, to: number, ask: StreamAsk): Promise<Record<string, unknown>[]> {
    const start = Math.max(from, to - this.#maxGap + 1);
    const numbers = Array.from({ length: to - start + 1 }, (_, i) => start + i);
    const blocks = await Promise.all(numbers.map((n) => ask('eth_getBlockByNumber', [`0x${n.toString(16)}`, false])));
    const headers: Record<string, unknown>[] = [];
    for (const block of blocks) {
      // A node that has not got the block yet ends the fill there; the next head fills the rest.
      if (block === null || typeof block !== 'object') break;
      const header = headerOf(block as Record<string, unknown>, this.#shape);
      this.#remember(Number.parseInt(header.number as string, 16), header.hash as string);
      headers.push(header);
    }
    return headers;
  }

  #take(number: number, hash: string, deliver: readonly unknown[]): readonly unknown[] {
    this.#remember(number, hash);
    return deliver;
  }

  #remember(number: number, hash: string): void {
    this.#last = number;
    this.#hashes.set(number, hash);
    this.#hashes.delete(number - REMEMBERED);
  }
}
