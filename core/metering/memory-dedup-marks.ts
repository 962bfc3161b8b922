import type { DedupMarks } from '../contracts/dedup-marks.js';

/** Sweep the expired marks once this many were made since the last sweep (keeps memory bounded by the window). */
const SWEEP_EVERY = 1024;

/** The {@link DedupMarks} of one process: the default; a deployment of several workers or instances uses a store plugin's. */
export class MemoryDedupMarks implements DedupMarks {
  /** Expiry of each mark, by id. */
  readonly #expiries = new Map<string, number>();
  #sinceSweep = 0;

  /** See {@link DedupMarks.mark}. */
  mark(id: string, windowMs: number, now: number): boolean {
    if (++this.#sinceSweep >= SWEEP_EVERY) this.#sweep(now);
    const expiry = this.#expiries.get(id);
    if (expiry !== undefined && expiry > now) return false;
    this.#expiries.set(id, now + windowMs);
    return true;
  }

  /** See {@link DedupMarks.unmark}. */
  unmark(id: string): void {
    this.#expiries.delete(id);
  }

  #sweep(now: number): void {
    this.#sinceSweep = 0;
    for (const [id, expiry] of this.#expiries) if (expiry <= now) this.#expiries.delete(id);
  }
}
