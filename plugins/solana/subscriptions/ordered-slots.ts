/**
 * Keeps a slot-ordered Solana stream continuous across nodes: `slotNotification`, `rootNotification`,
 * `blockNotification`.
 *
 * @module
 */
import type { StreamAsk, StreamContinuity } from '../../../core/family-api.js';

/** Where an event of the stream says its slot, and how a gap is filled. */
export interface SlotStream {
  /** The slot an event is about. */
  slotOf(event: unknown): number | undefined;
  /** The events of the slots after `last` up to the new node's, read from it (none when the stream cannot be filled). */
  fill?(last: number, ask: StreamAsk): Promise<readonly unknown[]>;
}

/**
 * Each slot once, in increasing order: an event at or below the last slot delivered is a repeat (the new
 * node sending what the old one did) and is dropped; after a move, the slots the stream missed are
 * filled from the new node where the stream says how.
 */
export class OrderedSlots implements StreamContinuity {
  readonly #stream: SlotStream;
  #last: number | undefined;

  constructor(stream: SlotStream) {
    this.#stream = stream;
  }

  next(result: unknown): readonly unknown[] {
    const slot = this.#stream.slotOf(result);
    if (slot === undefined) return [result];
    if (this.#last !== undefined && slot <= this.#last) return [];
    this.#last = slot;
    return [result];
  }

  async resumed(ask: StreamAsk): Promise<readonly unknown[]> {
    const last = this.#last;
    if (last === undefined || this.#stream.fill === undefined) return [];
    const filled = (await this.#stream.fill(last, ask)).filter((event) => (this.#stream.slotOf(event) ?? -1) > (this.#last ?? -1));
    const top = filled.length === 0 ? undefined : this.#stream.slotOf(filled[filled.length - 1]);
    if (top !== undefined) this.#last = top;
    return filled;
  }
}

/** Most slots a move fills (the newest of them); a longer outage delivers its last this many. */
export const MAX_SLOT_GAP = 256;

/** The numbers after `last` up to `to`, at most {@link MAX_SLOT_GAP} of them (the newest). */
export function slotsAfter(last: number, to: number): number[] {
  const from = Math.max(last + 1, to - MAX_SLOT_GAP + 1);
  return to < from ? [] : Array.from({ length: to - from + 1 }, (_, i) => from + i);
}
