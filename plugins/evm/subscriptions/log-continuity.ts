/**
 * Keeps a `logs` stream continuous when it moves between nodes.
 *
 * @module
 */
import type { StreamAsk, StreamContinuity } from '../../../core/family-api.js';

/** A log as a `logs` subscription sends it (only the fields read here). */
interface Log {
  readonly blockNumber: string;
  readonly blockHash: string;
  readonly logIndex: string;
  readonly removed?: boolean;
}

/** Blocks behind the newest delivered log whose logs are remembered (for repeats and reorgs). */
const REMEMBERED_BLOCKS = 128;

const hex = (n: number): string => `0x${n.toString(16)}`;

/**
 * Every matching log once across a change of node: the new node's history (`eth_getLogs` by block
 * range, from the first block not known to be complete up to its head) fills the gap, logs already
 * delivered are dropped, and a delivered log whose block the new node no longer has (a reorg) is sent
 * again with `removed: true`, as geth does. Logs the node itself marks `removed` pass through.
 */
export class LogContinuity implements StreamContinuity {
  readonly #filter: Readonly<Record<string, unknown>>;
  readonly #maxRange: number;
  /** Every log of blocks up to here was delivered. */
  #complete: number | undefined;
  /** Delivered logs (not removed) by `blockHash:logIndex`. */
  readonly #delivered = new Map<string, Log>();

  constructor(filter: Readonly<Record<string, unknown>>, maxRange: number) {
    this.#filter = filter;
    this.#maxRange = maxRange;
  }

  async opened(ask: StreamAsk): Promise<void> {
    const head = Number.parseInt((await ask('eth_blockNumber', [])) as string, 16);
    this.#complete = Math.max(this.#complete ?? head, head);
  }

  next(result: unknown): readonly unknown[] {
    const log = result as Log;
    const key = `${log.blockHash}:${log.logIndex}`;
    if (log.removed === true) {
      if (!this.#delivered.delete(key)) return [];
      return [result];
    }
    if (this.#delivered.has(key)) return [];
    this.#delivered.set(key, log);
    const block = Number.parseInt(log.blockNumber, 16);
    // Logs of a block come together: one of block b means blocks before b are complete.
    if (this.#complete === undefined || block - 1 > this.#complete) this.#complete = block - 1;
    this.#prune(block);
    return [result];
  }

  async resumed(ask: StreamAsk): Promise<readonly unknown[]> {
    if (this.#complete === undefined) return [];
    const head = Number.parseInt((await ask('eth_blockNumber', [])) as string, 16);
    const out: unknown[] = [];
    // Delivered logs whose block the new node does not have were reorged away.
    let from = this.#complete + 1;
    const blocks = new Map<number, string>();
    for (const log of this.#delivered.values()) blocks.set(Number.parseInt(log.blockNumber, 16), log.blockHash);
    const checked = await Promise.all([...blocks].map(async ([n, hash]) => {
      const block = (await ask('eth_getBlockByNumber', [hex(n), false])) as { hash?: string } | null;
      return { n, hash, same: block?.hash === hash };
    }));
    for (const { n, hash, same } of checked.sort((a, b) => a.n - b.n)) {
      if (same) continue;
      from = Math.min(from, n);
      for (const [key, log] of this.#delivered) {
        if (log.blockHash !== hash) continue;
        this.#delivered.delete(key);
        out.push({ ...log, removed: true });
      }
    }
    if (head >= from) {
      const start = Math.max(from, head - this.#maxRange + 1);
      const logs = (await ask('eth_getLogs', [{ ...this.#filter, fromBlock: hex(start), toBlock: hex(head) }])) as unknown[];
      for (const log of logs) out.push(...this.next(log));
      this.#complete = head;
    }
    return out;
  }

  #prune(newest: number): void {
    for (const [key, log] of this.#delivered) {
      if (Number.parseInt(log.blockNumber, 16) < newest - REMEMBERED_BLOCKS) this.#delivered.delete(key);
    }
  }
}
