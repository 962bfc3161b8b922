/** A write waiting for Redis, with when it was first asked for. */
interface Pending<T> {
  readonly write: T;
  readonly since: number;
}

/**
 * Writes that wait for Redis to come back, in order, bounded twice: by number (past `max`, new ones are
 * dropped) and by age (one older than the idempotency window is dropped rather than sent, since Redis
 * may have forgotten that it already applied it). Every drop is counted.
 */
export class PendingWrites<T> {
  readonly #max: number;
  readonly #windowMs: number;
  #queue: Array<Pending<T>> = [];
  #dropped = 0;

  constructor(max: number, windowMs: number) {
    this.#max = max;
    this.#windowMs = windowMs;
  }

  /** Writes waiting. */
  get size(): number {
    return this.#queue.length;
  }

  /** Writes dropped so far (queue full, or too old to send safely). */
  get dropped(): number {
    return this.#dropped;
  }

  /** Queues `write`; false when the queue is full and it was dropped. */
  push(write: T, now = Date.now()): boolean {
    if (this.#queue.length >= this.#max) {
      this.#dropped++;
      return false;
    }
    this.#queue.push({ write, since: now });
    return true;
  }

  /**
   * Sends every write in order with `send`; stops at the first failure, keeping that write and those
   * after it for the next try.
   */
  async drain(send: (write: T) => Promise<unknown>, now = Date.now()): Promise<void> {
    while (this.#queue.length > 0) {
      const head = this.#queue[0]!;
      if (now - head.since > this.#windowMs) {
        this.#queue.shift();
        this.#dropped++;
        continue;
      }
      await send(head.write);
      this.#queue.shift();
    }
  }

  /**
   * Sends every write at once with `send` (for writes that do not depend on each other's order); those
   * that fail stay queued for the next try. Rejects with the first failure.
   */
  async drainConcurrently(send: (write: T) => Promise<unknown>, now = Date.now()): Promise<void> {
    const fresh = this.#queue.filter((p) => now - p.since <= this.#windowMs);
    this.#dropped += this.#queue.length - fresh.length;
    this.#queue = [];
    const outcomes = await Promise.allSettled(fresh.map((p) => send(p.write)));
    let failure: PromiseRejectedResult | undefined;
    outcomes.forEach((outcome, i) => {
      if (outcome.status === 'fulfilled') return;
      failure ??= outcome;
      this.#queue.push(fresh[i]!);
    });
    if (failure !== undefined) throw failure.reason;
  }

  /** Every write waiting, oldest first. */
  values(): T[] {
    return this.#queue.map((p) => p.write);
  }
}
