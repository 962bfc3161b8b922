import { listLimit, settledEntry, settlingEntry, type JournalEntry, type JournalQuery, type PaymentJournal, type PaymentState, type SettledPayment, type SettlingPayment } from './payment-journal.js';

/** The {@link PaymentJournal} in memory: for tests and a single instance that may forget payments on restart. */
export class MemoryPaymentJournal implements PaymentJournal {
  readonly #entries = new Map<string, JournalEntry>();

  /** See {@link PaymentJournal.begin}. */
  async begin(payment: SettlingPayment): Promise<boolean> {
    return this.#insert(settlingEntry(payment));
  }

  /** See {@link PaymentJournal.record}. */
  async record(payment: SettledPayment): Promise<boolean> {
    return this.#insert(settledEntry(payment));
  }

  /** See {@link PaymentJournal.markSettled}. */
  async markSettled(id: string, transaction: string, at: number): Promise<boolean> {
    return this.#move(id, ['settling', 'failed'], { state: 'settled', transaction, settledAt: at, failure: undefined });
  }

  /** See {@link PaymentJournal.markFailed}. */
  async markFailed(id: string, failure: string, at: number): Promise<boolean> {
    return this.#move(id, ['settling'], { state: 'failed', failure, settledAt: at });
  }

  /** See {@link PaymentJournal.markCredited}. */
  async markCredited(id: string, at: number): Promise<boolean> {
    return this.#move(id, ['settled'], { state: 'credited', creditedAt: at });
  }

  /** See {@link PaymentJournal.get}. */
  async get(id: string): Promise<JournalEntry | undefined> {
    return this.#entries.get(id);
  }

  /** See {@link PaymentJournal.unfinished}. */
  async unfinished(): Promise<readonly JournalEntry[]> {
    return this.#oldest((e) => e.state === 'settling' || e.state === 'settled');
  }

  /** See {@link PaymentJournal.uncredited}. */
  async uncredited(): Promise<readonly JournalEntry[]> {
    return this.#oldest((e) => e.state === 'settled');
  }

  /** See {@link PaymentJournal.list}. */
  async list(query: JournalQuery): Promise<readonly JournalEntry[]> {
    const payer = query.payer?.toLowerCase();
    return [...this.#entries.values()]
      .filter((e) => (query.keyId === undefined || e.keyId === query.keyId) && (payer === undefined || e.payer.toLowerCase() === payer))
      .sort((a, b) => b.startedAt - a.startedAt)
      .slice(0, listLimit(query));
  }

  #insert(entry: JournalEntry): boolean {
    if (this.#entries.has(entry.id)) return false;
    this.#entries.set(entry.id, entry);
    return true;
  }

  #move(id: string, from: readonly PaymentState[], change: Partial<JournalEntry>): boolean {
    const entry = this.#entries.get(id);
    if (entry === undefined || !from.includes(entry.state)) return false;
    this.#entries.set(id, { ...entry, ...change });
    return true;
  }

  #oldest(keep: (e: JournalEntry) => boolean): JournalEntry[] {
    return [...this.#entries.values()].filter(keep).sort((a, b) => a.startedAt - b.startedAt);
  }
}
