import { systemClock, type Clock } from '../../core/plugin-api.js';
import { FacilitatorUnavailableError, type PaymentFacilitator } from './facilitator.js';
import type { OfferBook } from './offers.js';
import type { PaidCredits } from './paid-credits.js';
import { paymentIdOf, type JournalEntry, type PaymentJournal, type SettlingPayment } from './payment-journal.js';
import { refusal, type PaymentRefusal } from './payment-refusal.js';
import { x402Http } from './peers.js';
import type { PaymentPayload, PaymentRequirements, SettleResponse } from './x402-types.js';

/** A payment taken: settled on chain, recorded, credited. */
export interface PaymentTaken {
  /** Discriminant. */
  readonly ok: true;
  /** The journal's entry (state `credited`). */
  readonly entry: JournalEntry;
  /** The facilitator's settlement. */
  readonly settlement: SettleResponse;
  /** The `PAYMENT-RESPONSE` header's value (base64 of the settlement). */
  readonly responseHeader: string;
}

/** What {@link PaymentDesk.pay} answers. */
export type PaymentOutcome = PaymentTaken | PaymentRefusal;

/** What a {@link PaymentDesk} works with. */
export interface PaymentDeskParts {
  /** The bundles by plan. */
  readonly offers: OfferBook;
  /** Who verifies and settles. */
  readonly facilitator: PaymentFacilitator;
  /** The journal shared by the fleet. */
  readonly journal: PaymentJournal;
  /** Where bought credits go. */
  readonly credits: PaidCredits;
  /** Time (default the system's). */
  readonly clock?: Clock;
}

/** What {@link PaymentDesk.recover} did with the journal's unfinished entries. */
export interface RecoveryReport {
  /** Entries credited (settled before, or found settled on chain, or settled now). */
  readonly credited: number;
  /** Entries marked `failed` (their authorization expired unused, or its settle was refused). */
  readonly failed: number;
  /** Entries left `settling`: the chain could not be asked, or the outcome is still unknown. */
  readonly pending: number;
}

/** The EIP-3009 authorization of an exact-scheme payload, when it is one. */
interface Eip3009Authorization {
  readonly from: string;
  readonly nonce: string;
  readonly validBefore: number;
}

function authorizationOf(payload: PaymentPayload): Eip3009Authorization | undefined {
  const authorization = (payload.payload as { authorization?: Partial<Record<'from' | 'nonce' | 'validBefore', unknown>> }).authorization;
  const signature = (payload.payload as { signature?: unknown }).signature;
  if (typeof signature !== 'string' || typeof authorization?.from !== 'string' || typeof authorization.nonce !== 'string') return undefined;
  const validBefore = Number(authorization.validBefore);
  if (!Number.isSafeInteger(validBefore)) return undefined;
  return { from: authorization.from, nonce: authorization.nonce, validBefore };
}

/** A settle that was refused before anything was sent: x402's verify reasons (`invalid_exact_evm_*`...). */
const refusedBeforeSending = (reason: string | undefined): boolean => reason !== undefined && reason.startsWith('invalid_');

/**
 * Takes x402 payments for credit bundles: decode → match the plan's bundle → verify → record `settling`
 * → settle → `settled` → credit → `credited`, in that order and exactly once per payment. Nothing is
 * credited before the transfer settled (verify alone would let an empty wallet through between the two),
 * and a settled payment is never lost: the signed authorization is in the journal before the facilitator
 * is asked to settle it, so whatever a crash interrupts, `recover()` finds the entry and asks the token
 * whether the authorization was used (then it credits it), expired unused (then it failed) or can still
 * be settled (then it settles it now).
 */
export class PaymentDesk {
  readonly #parts: PaymentDeskParts;
  readonly #clock: Clock;

  constructor(parts: PaymentDeskParts) {
    this.#parts = parts;
    this.#clock = parts.clock ?? systemClock;
  }

  /** The bundles by plan (for the 402's offer). */
  get offers(): OfferBook {
    return this.#parts.offers;
  }

  /** The journal (for listing payments). */
  get journal(): PaymentJournal {
    return this.#parts.journal;
  }

  /**
   * Takes the payment in a `PAYMENT-SIGNATURE` header for `keyId`, a key on `plan`: credits the bundle it
   * chose once it settled. Never throws for a refused payment: the refusal is the answer.
   */
  async pay(keyId: string, plan: string, header: string): Promise<PaymentOutcome> {
    let payload: PaymentPayload;
    try {
      payload = x402Http.decodePaymentSignatureHeader(header);
    } catch (error) {
      return refusal('PAYMENT_MALFORMED', `the PAYMENT-SIGNATURE header is not an x402 payment: ${(error as Error).message}`);
    }
    if (payload?.x402Version !== 2 || typeof payload.accepted !== 'object' || payload.accepted === null || typeof payload.payload !== 'object' || payload.payload === null) {
      return refusal('PAYMENT_MALFORMED', 'the PAYMENT-SIGNATURE header is not an x402 v2 payment');
    }
    const bundle = this.#parts.offers.chosen(plan, payload);
    if (bundle === undefined) return refusal('PAYMENT_NO_OFFER', `the payment chose no bundle that plan ${plan} sells`);
    const authorization = authorizationOf(payload);
    if (authorization === undefined) return refusal('PAYMENT_UNSUPPORTED', 'only EIP-3009 authorizations (the exact scheme with a token such as USDC) are taken');
    const { requirements } = bundle;
    const id = paymentIdOf(requirements.network, requirements.asset, authorization.from, authorization.nonce);
    const known = await this.#parts.journal.get(id);
    if (known !== undefined) return this.#again(known);

    try {
      const verified = await this.#parts.facilitator.verify(payload, requirements);
      if (!verified.isValid) {
        return refusal('PAYMENT_INVALID', verified.invalidMessage ?? verified.invalidReason ?? 'the facilitator refused the payment', verified.invalidReason);
      }
    } catch (error) {
      if (error instanceof FacilitatorUnavailableError) return refusal('FACILITATOR_UNAVAILABLE', error.message);
      throw error;
    }
    const settling: SettlingPayment = {
      id, keyId, plan, credits: bundle.credits, payer: authorization.from, network: requirements.network, asset: requirements.asset,
      amount: requirements.amount, payTo: requirements.payTo, nonce: authorization.nonce, validBefore: authorization.validBefore,
      payload, requirements, startedAt: this.#clock.now(),
    };
    // Recorded before the settle: from here on a crash leaves an entry that recover() resolves. Two
    // instances sharing the journal: one records it, the other is refused here.
    if (!(await this.#parts.journal.begin(settling))) return refusal('PAYMENT_ALREADY_USED', 'this payment was taken before');
    return this.#settle(id, keyId, bundle.credits, payload, requirements);
  }

  /**
   * Resolves every entry a crash (or a settle whose outcome was unknown) left unfinished: an entry
   * `settled` is credited; an entry `settling` is looked up on chain, through the facilitator, by its
   * authorization: used → recorded settled (with the transaction of its `AuthorizationUsed` log) and
   * credited; unused and expired → `failed`; unused and still valid → settled now, then credited. A
   * facilitator that cannot ask the chain (by URL) is asked to settle it again while it is valid: the token
   * refuses a used authorization (`…nonce_already_used`), which then counts as settled. Run at start (and
   * safe to run at any time, in any number of instances: every step is conditioned on the state before it,
   * and the credit is idempotent by payment id).
   */
  async recover(): Promise<RecoveryReport> {
    let credited = 0;
    let failed = 0;
    let pending = 0;
    for (const entry of await this.#parts.journal.unfinished()) {
      const after = entry.state === 'settled' ? await this.#credit(entry.id, entry.keyId, entry.credits) : await this.#resolve(entry);
      if (after.state === 'credited') credited++;
      else if (after.state === 'failed') failed++;
      else pending++;
    }
    return { credited, failed, pending };
  }

  /** A payment whose id the journal holds already. */
  async #again(known: JournalEntry): Promise<PaymentOutcome> {
    if (known.state === 'settling') {
      // Its settle was interrupted or its outcome unknown: resolving it now answers the retry.
      const after = await this.#resolve(known);
      if (after.state === 'credited') return this.#taken(after);
      if (after.state === 'settling') return refusal('FACILITATOR_UNAVAILABLE', 'this payment is being settled and its outcome is not known yet: send it again later');
      return refusal('PAYMENT_NOT_SETTLED', `this payment did not settle: ${after.failure ?? 'refused'}`);
    }
    if (known.state === 'failed') return refusal('PAYMENT_ALREADY_USED', `this payment did not settle before (${known.failure ?? 'refused'}): sign a new one`);
    return refusal('PAYMENT_ALREADY_USED', `this payment was taken before (settled in ${known.transaction ?? 'an unknown transaction'})`);
  }

  /** Settles a `settling` entry's payment, then moves it on by the answer. */
  async #settle(id: string, keyId: string, credits: number, payload: PaymentPayload, requirements: PaymentRequirements): Promise<PaymentOutcome> {
    let settlement: SettleResponse;
    try {
      settlement = await this.#parts.facilitator.settle(payload, requirements);
    } catch (error) {
      if (!(error instanceof FacilitatorUnavailableError)) throw error;
      // The outcome is unknown: the entry stays `settling` for recover() or a retry of the same header.
      return refusal('FACILITATOR_UNAVAILABLE', `${error.message}; the payment is credited if it settled (send the same header again to find out)`);
    }
    if (settlement.success) {
      await this.#parts.journal.markSettled(id, settlement.transaction, this.#clock.now());
      const entry = await this.#credit(id, keyId, credits);
      return { ok: true, entry, settlement, responseHeader: x402Http.encodePaymentResponseHeader(settlement) };
    }
    const why = settlement.errorMessage ?? settlement.errorReason ?? 'the settlement failed';
    const entry = (await this.#parts.journal.get(id)) as JournalEntry;
    const after = await this.#afterRefusedSettle(entry, why, refusedBeforeSending(settlement.errorReason));
    if (after.state === 'credited') return this.#taken(after);
    return refusal('PAYMENT_NOT_SETTLED', why, settlement.errorReason);
  }

  /**
   * A settle answered no. Refused before anything was sent (a verify reason): `failed`. Otherwise a
   * transaction may have been sent (a timeout, a lost answer): the chain says whether it was used; when it
   * cannot say, the entry stays `settling` until the authorization expires.
   */
  async #afterRefusedSettle(entry: JournalEntry, why: string, nothingSent: boolean): Promise<JournalEntry> {
    const state = nothingSent ? undefined : await this.#chainState(entry);
    if (state?.used === true) return this.#settledOnChain(entry, state.transaction);
    if (nothingSent || state !== undefined || this.#expired(entry)) await this.#parts.journal.markFailed(entry.id, why, this.#clock.now());
    return (await this.#parts.journal.get(entry.id)) as JournalEntry;
  }

  /** Resolves a `settling` entry (see {@link PaymentDesk.recover}); answers the entry after. */
  async #resolve(entry: JournalEntry): Promise<JournalEntry> {
    if (entry.payload === undefined || entry.requirements === undefined) return entry;
    const state = await this.#chainState(entry);
    if (state?.used === true) return this.#settledOnChain(entry, state.transaction);
    if (this.#expired(entry)) {
      if (state !== undefined) {
        await this.#parts.journal.markFailed(entry.id, 'its authorization expired unused', this.#clock.now());
        return (await this.#parts.journal.get(entry.id)) as JournalEntry;
      }
      // A facilitator by URL cannot say whether an expired authorization was used: left to the operator.
      return entry;
    }
    let settlement: SettleResponse;
    try {
      settlement = await this.#parts.facilitator.settle(entry.payload, entry.requirements);
    } catch (error) {
      if (error instanceof FacilitatorUnavailableError) return entry;
      throw error;
    }
    if (settlement.success) {
      await this.#parts.journal.markSettled(entry.id, settlement.transaction, this.#clock.now());
      return this.#credit(entry.id, entry.keyId, entry.credits);
    }
    // A facilitator by URL refuses a used authorization by its nonce: it settled before.
    if (state === undefined && /nonce_already_used|authorization is used/i.test(`${settlement.errorReason ?? ''} ${settlement.errorMessage ?? ''}`)) {
      return this.#settledOnChain(entry, undefined);
    }
    return this.#afterRefusedSettle(entry, settlement.errorMessage ?? settlement.errorReason ?? 'the settlement failed', refusedBeforeSending(settlement.errorReason));
  }

  /** The chain's word on an entry's authorization, or undefined when the facilitator cannot ask it (or it did not answer). */
  async #chainState(entry: JournalEntry): Promise<{ used: boolean; transaction: string | undefined } | undefined> {
    const { facilitator } = this.#parts;
    if (facilitator.authorizationState === undefined || entry.nonce === undefined) return undefined;
    try {
      return await facilitator.authorizationState(entry.network, entry.asset, entry.payer, entry.nonce);
    } catch (error) {
      if (error instanceof FacilitatorUnavailableError) return undefined;
      throw error;
    }
  }

  async #settledOnChain(entry: JournalEntry, transaction: string | undefined): Promise<JournalEntry> {
    await this.#parts.journal.markSettled(entry.id, transaction ?? '', this.#clock.now());
    return this.#credit(entry.id, entry.keyId, entry.credits);
  }

  #expired(entry: JournalEntry): boolean {
    return entry.validBefore !== undefined && this.#clock.now() >= entry.validBefore * 1000;
  }

  #taken(entry: JournalEntry): PaymentTaken {
    const settlement: SettleResponse = { success: true, transaction: entry.transaction ?? '', network: entry.network as SettleResponse['network'], payer: entry.payer };
    return { ok: true, entry, settlement, responseHeader: x402Http.encodePaymentResponseHeader(settlement) };
  }

  async #credit(id: string, keyId: string, credits: number): Promise<JournalEntry> {
    const entry = await this.#parts.journal.get(id);
    if (entry === undefined) throw new Error(`payment ${id} vanished from the journal`);
    // Only a settled entry is credited; a credited one (another instance was quicker) is answered as it is.
    if (entry.state !== 'settled') return entry;
    await this.#parts.credits.add(keyId, credits, id);
    await this.#parts.journal.markCredited(id, this.#clock.now());
    return (await this.#parts.journal.get(id)) as JournalEntry;
  }
}
