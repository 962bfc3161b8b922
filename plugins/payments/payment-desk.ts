import { systemClock, type Clock } from '../../core/plugin-api.js';
import { FacilitatorUnavailableError, type PaymentFacilitator } from './facilitator.js';
import type { OfferBook } from './offers.js';
import type { PaidCredits } from './paid-credits.js';
import { paymentIdOf, type JournalEntry, type PaymentJournal } from './payment-journal.js';
import { refusal, type PaymentRefusal } from './payment-refusal.js';
import { x402Http } from './peers.js';
import type { PaymentPayload, SettleResponse } from './x402-types.js';

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

/** The EIP-3009 authorization of an exact-scheme payload, when it is one. */
interface Eip3009Authorization {
  readonly from: string;
  readonly nonce: string;
}

function authorizationOf(payload: PaymentPayload): Eip3009Authorization | undefined {
  const authorization = (payload.payload as { authorization?: Partial<Eip3009Authorization> }).authorization;
  const signature = (payload.payload as { signature?: unknown }).signature;
  if (typeof signature !== 'string' || typeof authorization?.from !== 'string' || typeof authorization.nonce !== 'string') return undefined;
  return { from: authorization.from, nonce: authorization.nonce };
}

/**
 * Takes x402 payments for credit bundles: decode → match the plan's bundle → verify → settle → record →
 * credit, in that order and exactly once per payment. Nothing is credited before the transfer settled
 * (verify alone would let an empty wallet through between the two), and a settled payment is never lost:
 * it is recorded with its transaction before its credit is added, and `recover()` credits what a crash
 * left recorded and not credited.
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
    if (known !== undefined) return refusal('PAYMENT_ALREADY_USED', `this payment was taken before (settled in ${known.transaction})`);

    try {
      const verified = await this.#parts.facilitator.verify(payload, requirements);
      if (!verified.isValid) {
        return refusal('PAYMENT_INVALID', verified.invalidMessage ?? verified.invalidReason ?? 'the facilitator refused the payment', verified.invalidReason);
      }
      const settlement = await this.#parts.facilitator.settle(payload, requirements);
      if (!settlement.success) {
        return refusal('PAYMENT_NOT_SETTLED', settlement.errorMessage ?? settlement.errorReason ?? 'the settlement failed', settlement.errorReason);
      }
      const settled = {
        id, keyId, plan, credits: bundle.credits, payer: authorization.from, network: requirements.network, asset: requirements.asset,
        amount: requirements.amount, payTo: requirements.payTo, transaction: settlement.transaction, settledAt: this.#clock.now(),
      };
      // The chain refuses a second use of the nonce, so only one settle of this payment succeeds, in any instance.
      if (!(await this.#parts.journal.record(settled))) return refusal('PAYMENT_ALREADY_USED', 'this payment was taken before');
      const entry = await this.#credit(settled.id, keyId, bundle.credits);
      return { ok: true, entry, settlement, responseHeader: x402Http.encodePaymentResponseHeader(settlement) };
    } catch (error) {
      if (error instanceof FacilitatorUnavailableError) return refusal('FACILITATOR_UNAVAILABLE', error.message);
      throw error;
    }
  }

  /**
   * Credits every payment the journal holds as settled and not credited (a crash, or a store outage,
   * between settle and credit). Run at start; answers how many it credited.
   */
  async recover(): Promise<number> {
    let credited = 0;
    for (const entry of await this.#parts.journal.uncredited()) {
      await this.#credit(entry.id, entry.keyId, entry.credits);
      credited++;
    }
    return credited;
  }

  async #credit(id: string, keyId: string, credits: number): Promise<JournalEntry> {
    await this.#parts.credits.add(keyId, credits, id);
    await this.#parts.journal.markCredited(id, this.#clock.now());
    const entry = await this.#parts.journal.get(id);
    if (entry === undefined) throw new Error(`payment ${id} vanished from the journal`);
    return entry;
  }
}
