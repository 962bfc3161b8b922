import type { MaybePromise } from '../util/maybe-promise.js';

/**
 * Marks of calls already charged, each for a window of time, kept where every worker and instance of a
 * deployment sees them: a call that repeats a marked one within its window (the same signed transaction
 * sent again by the same key, say) is the same call, charged once. The id says what is repeated (the
 * family that marks chooses it, scoped to the key); times are the gateway clock's (ms since epoch).
 *
 * The core keeps them in memory (one process); store plugins share them (SQLite between the workers of
 * one machine, Redis between instances).
 */
export interface DedupMarks {
  /**
   * Marks `id` until `now + windowMs`. True when `id` carried no live mark (this call is the first of the
   * window); false when it did (a repeat: the mark is left as it was, so the window runs from the first).
   */
  mark(id: string, windowMs: number, now: number): MaybePromise<boolean>;
  /** Takes `id`'s mark back: the call that made it was refunded, so the next one is the first again. */
  unmark(id: string): MaybePromise<void>;
}
