/**
 * Where a payment is in its life: `settled` (the transfer is on chain, the credit not yet added) or
 * `credited` (the bundle's credits were added). Only forward: `settled` → `credited`.
 */
export type PaymentState = 'settled' | 'credited';

/** A settled payment, as the journal records it before its credit is added. */
export interface SettledPayment {
  /** The payment's identity: `<network>/<asset>/<payer>/<authorization nonce>`, lower case (see {@link paymentIdOf}). */
  readonly id: string;
  /** The key it buys credits for. */
  readonly keyId: string;
  /** The plan whose bundle it bought. */
  readonly plan: string;
  /** Credits it buys. */
  readonly credits: number;
  /** The payer's address. */
  readonly payer: string;
  /** CAIP-2 network. */
  readonly network: string;
  /** The token paid in. */
  readonly asset: string;
  /** Amount paid, in the token's atomic units. */
  readonly amount: string;
  /** Who was paid. */
  readonly payTo: string;
  /** The settlement's transaction hash. */
  readonly transaction: string;
  /** When it was settled (ms since the epoch). */
  readonly settledAt: number;
}

/** A payment in the journal. */
export interface JournalEntry extends SettledPayment {
  /** Where it is. */
  readonly state: PaymentState;
  /** When its credit was added (ms since the epoch), once `credited`. */
  readonly creditedAt: number | undefined;
}

/**
 * The payment journal: the order settle → record → credit, kept exactly once per payment. A payment is
 * recorded once it settled (with its transaction), and marked credited once its credits were added; an
 * entry left `settled` (the process died between the two) is credited by the desk's `recover()` at
 * start. Shared by every instance of a fleet (SQLite on one machine; a networked store across machines),
 * so a payment replayed to another instance finds its entry.
 */
export interface PaymentJournal {
  /** Records a settled payment; false when its id is already in the journal (nothing is changed). */
  record(payment: SettledPayment): Promise<boolean>;
  /** Moves `id` from `settled` to `credited`; false when it is not `settled` (unknown, or credited already). */
  markCredited(id: string, at: number): Promise<boolean>;
  /** The entry of `id`, if any. */
  get(id: string): Promise<JournalEntry | undefined>;
  /** Every entry still `settled`, oldest first: what `recover()` credits. */
  uncredited(): Promise<readonly JournalEntry[]>;
}

/**
 * The identity of an EIP-3009 payment: its network, token, payer and authorization nonce, lower case.
 * The token itself refuses a second use of a nonce by its payer, so two payments with one id cannot both
 * settle, and the journal keeps one entry per id.
 */
export function paymentIdOf(network: string, asset: string, payer: string, nonce: string): string {
  return `${network}/${asset}/${payer}/${nonce}`.toLowerCase();
}
