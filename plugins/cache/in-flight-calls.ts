import type { AnswerMember } from './envelope.js';

/** A call in flight that identical calls wait for. */
interface Pending {
  readonly answer: Promise<AnswerMember | undefined>;
  readonly settle: (answer: AnswerMember | undefined) => void;
}

/**
 * Identical cacheable calls in flight at the same time, by cache key: the first (the leader) goes
 * upstream, the others wait for its answer (a result or the node's error) and each wraps it in its own
 * id. A leader that fails in the gateway (no upstream answered, its credits ran out) settles with
 * nothing, and each waiting call then goes upstream on its own.
 */
export class InFlightCalls {
  readonly #pending = new Map<string, Pending>();

  /** Calls in flight now. */
  get size(): number {
    return this.#pending.size;
  }

  /** The answer a call in flight under `key` will give, or undefined when none is in flight. */
  waitFor(key: string): Promise<AnswerMember | undefined> | undefined {
    return this.#pending.get(key)?.answer;
  }

  /** Registers the caller as the leader for `key`; the returned function settles it (once). */
  lead(key: string): (answer: AnswerMember | undefined) => void {
    let settle!: (answer: AnswerMember | undefined) => void;
    const answer = new Promise<AnswerMember | undefined>((resolve) => (settle = resolve));
    const pending: Pending = { answer, settle };
    this.#pending.set(key, pending);
    let settled = false;
    return (result) => {
      if (settled) return;
      settled = true;
      if (this.#pending.get(key) === pending) this.#pending.delete(key);
      settle(result);
    };
  }
}
