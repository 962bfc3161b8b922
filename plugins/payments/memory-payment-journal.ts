import type { JournalEntry, PaymentJournal, SettledPayment } from './payment-journal.js';

/** The {@link PaymentJournal} in memory: for tests and a single instance that may forget payments on restart. */
export class MemoryPaymentJournal implements PaymentJournal {
  readonly #entries = new Map<string, JournalEntry>();

  /** See {@link PaymentJournal.record}. */
  async record(payment: SettledPayment): Promise<boolean> {
    if (this.#entries.has(payment.id)) return false;
    this.#entries.set(payment.id, { ...payment, state: 'settled', creditedAt: undefined });
    return true;
  }

  /** See {@link PaymentJournal.markCredited}. */
  async markCredited(id: string, at: number): Promise<boolean> {
    const entry = this.#entries.get(id);
    if (entry?.state !== 'settled') return false;
    this.#entries.set(id, { ...entry, state: 'credited', creditedAt: at });
    return true;
  }

  /** See {@link PaymentJournal.get}. */
  async get(id: string): Promise<JournalEntry | undefined> {
    return this.#entries.get(id);
  }

  /** See {@link PaymentJournal.uncredited}. */
  async uncredited(): Promise<readonly JournalEntry[]> {
    return [...this.#entries.values()].filter((e) => e.state === 'settled').sort((a, b) => a.settledAt - b.settledAt);
  }
}
