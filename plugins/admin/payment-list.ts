import type { InjectionToken } from '../../core/plugin-api.js';

/** A payment as the payments plugin's journal lists it (the parts shown here). */
export interface ListedPayment {
  /** Its id. */
  readonly id: string;
  /** The key it bought credits for. */
  readonly keyId: string;
  /** The plan whose bundle it bought. */
  readonly plan: string;
  /** Credits the bundle adds. */
  readonly credits: number;
  /** Where it is. */
  readonly state: PaymentState;
  /** The payer's address. */
  readonly payer: string;
  /** CAIP-2 network. */
  readonly network: string;
  /** The token paid in. */
  readonly asset: string;
  /** Amount, in the token's atomic units. */
  readonly amount: string;
  /** Who was paid. */
  readonly payTo: string;
  /** The settlement's transaction, once known. */
  readonly transaction: string | undefined;
  /** When its settle began (ms since the epoch). */
  readonly startedAt: number;
  /** When it was known settled, or failed (ms). */
  readonly settledAt: number | undefined;
  /** When its credits were added (ms). */
  readonly creditedAt: number | undefined;
  /** Why it failed. */
  readonly failure: string | undefined;
}

/** Where a payment is: `settling`, `settled`, `credited` or `failed` (the payments plugin's `PaymentState`). */
export type PaymentState = 'settling' | 'settled' | 'credited' | 'failed';

/**
 * What the admin API asks of the payments plugin's journal (its `PaymentJournal` has it): payments by
 * key and/or payer, newest first. Declared here so that the admin plugin needs neither that plugin nor
 * its x402 peers.
 */
export interface PaymentLister {
  /** Payments of `keyId` and/or `payer` (any case), newest first, at most `limit`. */
  list(query: { readonly keyId?: string; readonly payer?: string; readonly limit?: number }): Promise<readonly ListedPayment[]>;
}

/**
 * The payments plugin's journal in the container (its `PaymentJournalToken`, by the same `Symbol.for`
 * key): the admin API lists payments through it without importing that plugin.
 */
export const PaymentJournalKey = Symbol.for('tollgate.payments.PaymentJournal') as InjectionToken<PaymentLister>;

/** A payment as the admin API, the CLI and the dashboard show it (never its signature). */
export interface PaymentView {
  /** `<network>/<asset>/<payer>/<nonce>`, lower case. */
  readonly id: string;
  /** The key it bought credits for. */
  readonly keyId: string;
  /** The plan whose bundle it bought. */
  readonly plan: string;
  /** Credits the bundle adds. */
  readonly credits: number;
  /** `settling`, `settled`, `credited` or `failed`. */
  readonly state: PaymentState;
  /** The payer's address (the wallet). */
  readonly payer: string;
  /** CAIP-2 network. */
  readonly network: string;
  /** The token paid in. */
  readonly asset: string;
  /** Amount, in the token's atomic units. */
  readonly amount: string;
  /** Who was paid. */
  readonly payTo: string;
  /** The settlement's transaction, once known (`null` before, or when the chain showed the payment settled without it). */
  readonly transaction: string | null;
  /** When its settle began (ISO 8601). */
  readonly startedAt: string;
  /** When it was known settled, or failed (ISO 8601). */
  readonly settledAt: string | null;
  /** When its credits were added (ISO 8601). */
  readonly creditedAt: string | null;
  /** Why it failed. */
  readonly failure: string | null;
}

const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());

/** The view of a journal entry. */
export function paymentView(entry: ListedPayment): PaymentView {
  return {
    id: entry.id, keyId: entry.keyId, plan: entry.plan, credits: entry.credits, state: entry.state, payer: entry.payer, network: entry.network,
    asset: entry.asset, amount: entry.amount, payTo: entry.payTo, transaction: entry.transaction === undefined || entry.transaction === '' ? null : entry.transaction,
    startedAt: iso(entry.startedAt)!, settledAt: iso(entry.settledAt), creditedAt: iso(entry.creditedAt), failure: entry.failure ?? null,
  };
}

/** A wallet address, as a payer filter: 0x and 40 hex digits. */
export const WALLET_PATTERN = /^0x[0-9a-fA-F]{40}$/;

/** Lists `journal`'s payments by key and/or wallet, newest first. */
export async function listPayments(journal: PaymentLister, query: { readonly keyId?: string; readonly payer?: string; readonly limit?: number }): Promise<PaymentView[]> {
  return (await journal.list(query)).map(paymentView);
}

/** One line per payment, for the CLI: when, state, credits, amount, wallet, transaction. */
export function describePayment(p: PaymentView): string {
  return [p.startedAt, p.state.padEnd(8), `${p.credits} credits`, `${p.amount} of ${p.asset} on ${p.network}`, `key ${p.keyId}`, `from ${p.payer}`, p.transaction ?? p.failure ?? '']
    .join('  ').trimEnd();
}
