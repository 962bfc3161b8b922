import type { PaymentPayload, PaymentRequirements, SettleResponse, VerifyResponse } from './x402-types.js';

/**
 * Who checks and executes payments. `verify` says whether a payment would settle (signature, amount,
 * recipient, validity window, the payer's balance) without moving funds; `settle` moves them on chain
 * and answers with the transaction. Both answer a refusal as a value (`isValid: false` /
 * `success: false` with the x402 reason); they throw {@link FacilitatorUnavailableError} only when the
 * facilitator could not be asked, or did not answer.
 */
export interface PaymentFacilitator {
  /** `url` or `embedded`: which kind it is (for logs and errors). */
  readonly kind: string;
  /** Checks `payload` against `requirements` without settling it. */
  verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse>;
  /** Settles `payload`: on success `transaction` is the settlement's transaction hash. */
  settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse>;
}

/**
 * The facilitator could not be asked or did not answer (down, timed out, a malformed answer). For a
 * settle the outcome is unknown: the payment may have settled.
 */
export class FacilitatorUnavailableError extends Error {
  /** Stable code. */
  readonly code = 'FACILITATOR_UNAVAILABLE';
  /** The operation that failed. */
  readonly operation: 'verify' | 'settle';
  constructor(operation: 'verify' | 'settle', message: string, options?: ErrorOptions) {
    super(`the x402 facilitator's ${operation} failed: ${message}`, options);
    this.name = 'FacilitatorUnavailableError';
    this.operation = operation;
  }
}
