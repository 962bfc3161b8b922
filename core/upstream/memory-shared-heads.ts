import type { HeadKey, HeadListener, SharedHeads } from '../contracts/shared-heads.js';

/** The map key of a {@link HeadKey}. */
function keyOf(key: HeadKey): string {
  return `${key.network}\u0000${key.scope}`;
}

/**
 * {@link SharedHeads} within one process: the default, enough for a gateway that runs alone. Listeners
 * hear a rise synchronously, inside {@link MemorySharedHeads.offer}.
 */
export class MemorySharedHeads implements SharedHeads {
  readonly #heads = new Map<string, number>();
  readonly #listeners: HeadListener[] = [];

  /** Raises the head of `key` to `head` when it is higher, and tells the listeners. */
  offer(key: HeadKey, head: number): void {
    if (!Number.isSafeInteger(head) || head < 0) return;
    const id = keyOf(key);
    const current = this.#heads.get(id);
    if (current !== undefined && current >= head) return;
    this.#heads.set(id, head);
    for (const listener of this.#listeners) listener(key, head);
  }

  /** Adds a listener of rises. */
  onRaise(listener: HeadListener): void {
    this.#listeners.push(listener);
  }

  /** The head of `key`, if any was offered. */
  head(key: HeadKey): number | undefined {
    return this.#heads.get(keyOf(key));
  }
}
