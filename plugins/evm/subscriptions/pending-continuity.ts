/**
 * A `newPendingTransactions` stream across a change of node.
 *
 * @module
 */
import type { StreamContinuity } from '../../../core/family-api.js';

/** Hashes remembered to drop repeats. */
const REMEMBERED = 8192;

/**
 * Drops hashes already delivered (the new node announces what its pool holds). A transaction pool
 * has no history to read, so transactions the new node saw before the stream moved are not replayed.
 */
export class PendingContinuity implements StreamContinuity {
  readonly #seen = new Set<string>();

  next(result: unknown): readonly unknown[] {
    const hash = result as string;
    if (this.#seen.has(hash)) return [];
    this.#seen.add(hash);
    if (this.#seen.size > REMEMBERED) this.#seen.delete(this.#seen.values().next().value as string);
    return [result];
  }

  resumed(): readonly unknown[] {
    return [];
  }
}
