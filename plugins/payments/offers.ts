import type { BundleOffer } from './settings.js';
import type { Network, PaymentPayload, PaymentRequired, PaymentRequirements, ResourceInfo } from './x402-types.js';

/** The x402 protocol version this plugin speaks. */
export const X402_VERSION = 2;

/** A bundle on sale, with the x402 requirement a payment for it must meet. */
export interface PricedBundle {
  /** The plan that sells it. */
  readonly plan: string;
  /** Credits it adds. */
  readonly credits: number;
  /** What a payment for it must meet: scheme `exact`, network, asset, amount, `payTo`, EIP-712 domain. */
  readonly requirements: PaymentRequirements;
}

/** The x402 v2 requirement of one offer: the `exact` scheme, with the token's EIP-712 domain in `extra`. */
export function requirementsOf(offer: Required<BundleOffer>): PaymentRequirements {
  return {
    scheme: 'exact',
    network: offer.network as Network,
    asset: offer.asset,
    amount: offer.price,
    payTo: offer.payTo,
    maxTimeoutSeconds: offer.maxTimeoutSeconds,
    extra: { name: offer.name, version: offer.version },
  };
}

/** Whether two requirements ask for the same payment (addresses compared without their checksum case). */
function samePayment(a: PaymentRequirements, b: PaymentRequirements): boolean {
  return a.scheme === b.scheme && a.network === b.network && a.amount === b.amount
    && a.asset.toLowerCase() === b.asset.toLowerCase() && a.payTo.toLowerCase() === b.payTo.toLowerCase();
}

/**
 * The bundles each plan sells, as x402 requirements: what a 402 offers, and what a payment is checked
 * against. A payment is always verified against the requirement built here, never against the copy the
 * client sends back (`accepted`), which only says which bundle it chose.
 */
export class OfferBook {
  readonly #byPlan: ReadonlyMap<string, readonly PricedBundle[]>;

  constructor(offers: Readonly<Record<string, ReadonlyArray<Required<BundleOffer>>>>) {
    this.#byPlan = new Map(Object.entries(offers).map(([plan, list]) => [plan, list.map((offer) => ({ plan, credits: offer.credits, requirements: requirementsOf(offer) }))]));
  }

  /** The bundles `plan` sells (none when it sells nothing). */
  bundles(plan: string): readonly PricedBundle[] {
    return this.#byPlan.get(plan) ?? [];
  }

  /**
   * The x402 v2 `PaymentRequired` for a key on `plan` (the body of the `PAYMENT-REQUIRED` header), or
   * `undefined` when the plan sells nothing.
   */
  paymentRequired(plan: string, resource: ResourceInfo, error?: string): PaymentRequired | undefined {
    const bundles = this.bundles(plan);
    if (bundles.length === 0) return undefined;
    return { x402Version: X402_VERSION, ...(error === undefined ? {} : { error }), resource, accepts: bundles.map((b) => b.requirements) };
  }

  /** The bundle of `plan` a payment chose (by its `accepted` requirement), or `undefined`. */
  chosen(plan: string, payload: PaymentPayload): PricedBundle | undefined {
    return this.bundles(plan).find((bundle) => samePayment(bundle.requirements, payload.accepted));
  }
}
