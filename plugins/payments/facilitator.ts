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
  /**
   * Asks the token whether `authorizer` used the EIP-3009 authorization `nonce` (its
   * `authorizationState`), and if so in which transaction (its `AuthorizationUsed` log). Only a
   * facilitator that reaches the chain has it (the embedded one); a facilitator by URL cannot be asked.
   *
   * @throws FacilitatorUnavailableError when the chain could not be asked.
   */
  authorizationState?(network: string, asset: string, authorizer: string, nonce: string): Promise<AuthorizationState>;
}

/** Whether an EIP-3009 authorization was used on chain, and where. */
export interface AuthorizationState {
  /** The token's `authorizationState(authorizer, nonce)`: true once it was used (or cancelled). */
  readonly used: boolean;
  /** The transaction of its `AuthorizationUsed` log, when found. */
  readonly transaction: string | undefined;
}

/**
 * The facilitator could not be asked or did not answer (down, timed out, a malformed answer). For a
 * settle the outcome is unknown: the payment may have settled.
 */
export class FacilitatorUnavailableError extends Error {
  /** Stable code. */
  readonly code = 'FACILITATOR_UNAVAILABLE';
  /** The operation that failed. */
  readonly operation: 'verify' | 'settle' | 'authorizationState';
  constructor(operation: 'verify' | 'settle' | 'authorizationState', message: string, options?: ErrorOptions) {
    super(`the x402 facilitator's ${operation} failed: ${message}`, options);
    this.name = 'FacilitatorUnavailableError';
    this.operation = operation;
  }
}
