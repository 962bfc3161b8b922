/**
 * Keeps a Solana stream of distinct records continuous across nodes by their identity:
 * `logsNotification` (a transaction's signature), `programNotification` (an account at a slot),
 * `voteNotification` (a vote's signature), `slotsUpdatesNotification` (a slot's step).
 *
 * @module
 */
import type { StreamContinuity } from '../../../core/family-api.js';

/** Identities remembered: a repeat after a move comes within the last few slots, far fewer events than this. */
const REMEMBERED = 4_096;

/**
 * Delivers an event unless one with the same identity was delivered already (the new node resending what
 * the old one did). The records a stream missed while it moved cannot be read back from a node (a node
 * keeps no history of logs, votes or program changes a client could be sent), so a move fills nothing.
 */
export class SeenEvents implements StreamContinuity {
  readonly #identity: (event: unknown) => string | undefined;
  readonly #seen = new Set<string>();

  constructor(identity: (event: unknown) => string | undefined) {
    this.#identity = identity;
  }

  next(result: unknown): readonly unknown[] {
    const id = this.#identity(result);
    if (id === undefined) return [result];
    if (this.#seen.has(id)) return [];
    this.#seen.add(id);
    // A Set iterates in insertion order: the first is the oldest.
    if (this.#seen.size > REMEMBERED) this.#seen.delete(this.#seen.values().next().value!);
    return [result];
  }

  resumed(): readonly unknown[] {
    return [];
  }
}
