/**
 * Keeps an `accountSubscribe` stream continuous across nodes.
 *
 * @module
 */
import type { StreamAsk, StreamContinuity } from '../../../core/family-api.js';

/** An account notification's result, and `getAccountInfo`'s: `{context: {slot}, value}`. */
interface AccountAtSlot {
  readonly context?: { readonly slot?: number };
  readonly value?: unknown;
}

/**
 * An account's states in slot order, each once: a notification for a slot already delivered with the
 * same state is a repeat (the new node sending it again) and is dropped, as is one older than the last
 * delivered. After a move the new node is asked for the account (`getAccountInfo`, with the stream's own
 * config) and its state is delivered when it changed meanwhile: the client sees the account as it is,
 * though a change overwritten during the move is not replayed (a node keeps no account history).
 */
export class AccountContinuity implements StreamContinuity {
  readonly #address: string;
  readonly #config: unknown;
  #slot = -1;
  /** The state delivered last (or read when the stream opened), as JSON text. */
  #state: string | undefined;

  constructor(address: string, config: unknown) {
    this.#address = address;
    this.#config = config;
  }

  async opened(ask: StreamAsk): Promise<void> {
    const now = (await ask('getAccountInfo', [this.#address, this.#config])) as AccountAtSlot;
    // A notification may have come while the read was out: what it delivered is newer.
    if (this.#state === undefined) this.#state = JSON.stringify(now.value ?? null);
  }

  next(result: unknown): readonly unknown[] {
    const event = result as AccountAtSlot;
    const slot = event.context?.slot ?? this.#slot;
    const state = JSON.stringify(event.value ?? null);
    if (slot < this.#slot || (slot === this.#slot && state === this.#state)) return [];
    this.#slot = slot;
    this.#state = state;
    return [result];
  }

  async resumed(ask: StreamAsk): Promise<readonly unknown[]> {
    const now = (await ask('getAccountInfo', [this.#address, this.#config])) as AccountAtSlot;
    const slot = now.context?.slot ?? -1;
    const state = JSON.stringify(now.value ?? null);
    if (slot <= this.#slot || state === this.#state) return [];
    this.#slot = slot;
    this.#state = state;
    return [{ context: { slot }, value: now.value ?? null }];
  }
}
